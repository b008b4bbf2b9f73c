# Which GPUs the kernels are built for, decided before CUDA is enabled (enable_language fills
# CMAKE_CUDA_ARCHITECTURES with the toolkit's oldest default, 75 for CUDA 13, which no user of this
# project runs and which makes an H100 JIT the kernels at first use).
#
# Unless the user chose (-DCMAKE_CUDA_ARCHITECTURES=... or the CUDAARCHS environment variable): machine
# code for each major architecture users run that the toolkit knows -- 80 (A100; runs on 86 and 89
# too), 90 (H100, H200), 100 (B200; runs on 103), 120 (RTX 50, RTX PRO Blackwell) -- and PTX of the
# newest of 80/90/100 for GPUs newer than the list (110 and later JIT it). Our choice is remembered in
# the cache, so a reconfigure keeps it, and a user's later -D replaces it.
set(_gdfs_wanted 80 90 100 120)
if(DEFINED CACHE{GDFS_CUDA_ARCHITECTURES_DEFAULT} AND
   NOT "${CMAKE_CUDA_ARCHITECTURES}" STREQUAL "${GDFS_CUDA_ARCHITECTURES_DEFAULT}")
  unset(GDFS_CUDA_ARCHITECTURES_DEFAULT CACHE)  # the user set another value since
endif()
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT DEFINED ENV{CUDAARCHS} OR
   DEFINED CACHE{GDFS_CUDA_ARCHITECTURES_DEFAULT})
  execute_process(COMMAND "${CMAKE_CUDA_COMPILER}" --list-gpu-arch OUTPUT_VARIABLE _gdfs_known
                  RESULT_VARIABLE _gdfs_rc ERROR_QUIET)
  set(_gdfs_archs "")
  set(_gdfs_ptx "")
  foreach(a IN LISTS _gdfs_wanted)
    # nvcc older than 12.4 has no --list-gpu-arch: then sm_80 and sm_90 alone, which every CUDA 12 knows.
    if(_gdfs_rc EQUAL 0 AND _gdfs_known MATCHES "compute_${a}([^0-9]|$)" OR
       NOT _gdfs_rc EQUAL 0 AND a LESS 100)
      list(APPEND _gdfs_archs ${a}-real)
      if(a LESS 110)
        set(_gdfs_ptx ${a})
      endif()
    endif()
  endforeach()
  if(NOT _gdfs_archs)
    message(FATAL_ERROR "${CMAKE_CUDA_COMPILER} knows none of sm_${_gdfs_wanted}: set CMAKE_CUDA_ARCHITECTURES")
  endif()
  list(APPEND _gdfs_archs ${_gdfs_ptx}-virtual)
  set(CMAKE_CUDA_ARCHITECTURES "${_gdfs_archs}" CACHE STRING "CUDA architectures the kernels are built for" FORCE)
  set(GDFS_CUDA_ARCHITECTURES_DEFAULT "${_gdfs_archs}" CACHE INTERNAL "the architectures gdfs chose")
endif()
message(STATUS "gdfs: CUDA kernels for ${CMAKE_CUDA_ARCHITECTURES}")
