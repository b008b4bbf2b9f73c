# The Debian package's /usr/share/doc/gdfs/copyright and changelog.gz, generated from LICENSE and
# CHANGELOG.md at configure time (reconfigured when either changes), installed by `cmake --install`
# too. copyright is in Debian's machine-readable format (the MIT licence is "Expat" there); the
# changelog has one Debian entry per released section of CHANGELOG.md ("## [X.Y.Z] - YYYY-MM-DD"),
# its bullets as "*" items, dated at noon UTC of the release day, and is gzip -9n'd (reproducible).
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
             ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/CHANGELOG.md)
set(_gdfs_doc_dir ${PROJECT_BINARY_DIR}/debian-doc)
file(MAKE_DIRECTORY ${_gdfs_doc_dir})

# copyright: the licence text below a DEP-5 header, blank lines as " .".
file(STRINGS ${PROJECT_SOURCE_DIR}/LICENSE _gdfs_license)
set(_gdfs_holder "")
foreach(line IN LISTS _gdfs_license)
  if(NOT _gdfs_holder AND line MATCHES "^Copyright \\(c\\) (.+)$")  # "Copyright (c) 2026 the gdfs authors"
    set(_gdfs_holder "${CMAKE_MATCH_1}")
  endif()
endforeach()
if(NOT _gdfs_holder)
  message(FATAL_ERROR "LICENSE has no 'Copyright (c) ...' line")
endif()
set(_gdfs_copyright "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"
                    "Upstream-Name: gdfs\n\nFiles: *\nCopyright: ${_gdfs_holder}\nLicense: Expat\n")
set(_gdfs_body FALSE)
foreach(line IN LISTS _gdfs_license)
  if(line MATCHES "^Permission")
    set(_gdfs_body TRUE)
  endif()
  if(_gdfs_body)
    if(line STREQUAL "")
      string(APPEND _gdfs_copyright " .\n")
    else()
      string(APPEND _gdfs_copyright " ${line}\n")
    endif()
  endif()
endforeach()
string(JOIN "" _gdfs_copyright ${_gdfs_copyright})
file(WRITE ${_gdfs_doc_dir}/copyright "${_gdfs_copyright}")

# changelog: sections of CHANGELOG.md, newest first, as Debian entries.
file(STRINGS ${PROJECT_SOURCE_DIR}/CHANGELOG.md _gdfs_md)
set(_gdfs_log "")
set(_gdfs_entry "")
set(_gdfs_trailer "")
macro(_gdfs_close_entry)
  if(_gdfs_entry)
    string(APPEND _gdfs_log "${_gdfs_entry}\n${_gdfs_trailer}\n\n")
  endif()
  set(_gdfs_entry "")
endmacro()
foreach(line IN LISTS _gdfs_md)
  if(line MATCHES "^## \\[([0-9][^]]*)\\] - ([0-9]+-[0-9]+-[0-9]+)")
    _gdfs_close_entry()
    set(_gdfs_version ${CMAKE_MATCH_1})
    execute_process(COMMAND date -u -R -d "${CMAKE_MATCH_2} 12:00" OUTPUT_VARIABLE _gdfs_date
                    OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
    set(_gdfs_entry "gdfs (${_gdfs_version}) unstable; urgency=medium\n\n")
    set(_gdfs_trailer " -- ${CPACK_PACKAGE_CONTACT}  ${_gdfs_date}")
  elseif(line MATCHES "^## ")
    _gdfs_close_entry()  # [Unreleased]: not in the package
  elseif(_gdfs_entry AND line MATCHES "^### (.*)")
    string(APPEND _gdfs_entry "  [ ${CMAKE_MATCH_1} ]\n")
  elseif(_gdfs_entry AND line MATCHES "^- (.*)")
    string(APPEND _gdfs_entry "  * ${CMAKE_MATCH_1}\n")
  elseif(_gdfs_entry AND line MATCHES "^  +(.*)")
    string(APPEND _gdfs_entry "    ${CMAKE_MATCH_1}\n")
  elseif(_gdfs_entry AND NOT line STREQUAL "")
    string(APPEND _gdfs_entry "  * ${line}\n")
  endif()
endforeach()
_gdfs_close_entry()
if(NOT _gdfs_log MATCHES "^gdfs \\(${PROJECT_VERSION}\\)")
  message(FATAL_ERROR "CHANGELOG.md has no section for ${PROJECT_VERSION} at the top (## [${PROJECT_VERSION}] - DATE)")
endif()
string(REGEX REPLACE "\n\n$" "\n" _gdfs_log "${_gdfs_log}")
file(WRITE ${_gdfs_doc_dir}/changelog "${_gdfs_log}")
find_program(GZIP_PROGRAM gzip REQUIRED)
execute_process(COMMAND ${GZIP_PROGRAM} -9n -c ${_gdfs_doc_dir}/changelog
                OUTPUT_FILE ${_gdfs_doc_dir}/changelog.gz COMMAND_ERROR_IS_FATAL ANY)
install(FILES ${_gdfs_doc_dir}/copyright ${_gdfs_doc_dir}/changelog.gz DESTINATION ${CMAKE_INSTALL_DOCDIR})
# What lintian reports that is not so (each line says why).
install(FILES ${CMAKE_CURRENT_LIST_DIR}/debian/lintian-overrides DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides
        RENAME gdfs)
