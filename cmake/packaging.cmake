# cpack -G DEB: one package, gdfs, holding everything `cmake --install` puts in place (binaries, the
# mount helper link, man pages, bash completions, docs). Its dependencies are what dpkg-shlibdeps finds
# the binaries link against (needs dpkg-dev), plus fuse3 for fusermount3 and mount.fuse3, which the
# daemon and the mount.fuse.gdfs link rely on at run time. scripts/check-install checks the result.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME gdfs)
set(CPACK_PACKAGE_VENDOR "gdfs developers")
set(CPACK_PACKAGE_CONTACT "gdfs developers <dev@gdfs.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "compressed read-only filesystem with GPU decoding")
set(CPACK_PACKAGE_DESCRIPTION
    "gdfs packs a directory tree into a read-only image whose file data is cut into pages of at most
64 KiB, each compressed with GDeflate, a DEFLATE variant laid out so that 32 SIMD lanes or one GPU
warp decode a page together. The gdfs FUSE daemon mounts an image and serves random reads, decoding
pages in GPU batches or on the CPU.
This package holds mkfs.gdfs, the gdfs daemon (with the mount.fuse.gdfs helper for mount(8) and
fstab), gdfs-inspect (inspect, verify and extract images without mounting) and the gdeflate tool.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # gdfs_VERSION_ARCH.deb
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS fuse3)
if(TARGET gdfs_python)  # the module is built for one Python minor version (its ABI)
  string(APPEND CPACK_DEBIAN_PACKAGE_DEPENDS ", python3 (>= ${GDFS_PYTHON_ABI}), python3 (<< ${GDFS_PYTHON_ABI}.999)")
endif()
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# libgdfs.so.0: a shlibs file for packages that link it, and ldconfig run by dpkg's trigger (lintian's
# no-shlibs and lacks-ldconfig-trigger).
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
file(WRITE ${PROJECT_BINARY_DIR}/debian-control/triggers "activate-noawait ldconfig\n")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${PROJECT_BINARY_DIR}/debian-control/triggers)

# Installing (make install, and cpack, which installs through the same rules) does not build `all`
# first: with tests on, that is the whole test suite. Build first: cmake --build, or the target below.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

include(CPack)
include(${CMAKE_CURRENT_LIST_DIR}/debian_docs.cmake)

# What `cmake --install` needs built, so that scripts/check-install builds only that. A new install()
# of a target adds the target here.
add_custom_target(gdfs_install_targets)
add_dependencies(gdfs_install_targets mkfs.gdfs gdfs-inspect gdeflate gdfs_man)
foreach(t gdfs_lib gdfs_python)
  if(TARGET ${t})
    add_dependencies(gdfs_install_targets ${t})
  endif()
endforeach()
if(TARGET gdfs)
  add_dependencies(gdfs_install_targets gdfs)
endif()
