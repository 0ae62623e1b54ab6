# The Linux tree whose arm64 JIT becomes the engines kernel-jit and
# kernel-jit-llsc (kernelsrc/). Read, never copied: its files are compiled
# where they are.
#
#   BPFDIFF_KERNEL_SOURCE  a tree: a full checkout (a maintainer's, patches
#                          applied) or the part ci/kernel_source.sh extracts.
#                          Empty: $BPFDIFF_KERNEL_SOURCE, else the cache that
#                          ci/kernel_source.sh fills from Debian's
#                          linux-source-6.12.
#   BPFDIFF_KERNEL_JIT     AUTO (on when a tree is found), ON (a missing tree
#                          is an error) or OFF.
set(BPFDIFF_KERNEL_SOURCE "" CACHE PATH "Linux tree to build the kernel's arm64 JIT from")
set(BPFDIFF_KERNEL_JIT "AUTO" CACHE STRING "Build the kernel's arm64 JIT as engines: AUTO, ON or OFF")
set_property(CACHE BPFDIFF_KERNEL_JIT PROPERTY STRINGS AUTO ON OFF)

# The files of the tree the build reads (kernelsrc/tree_files.txt, which
# ci/kernel_source.sh extracts too), and a header of each tools/ directory.
file(STRINGS "${CMAKE_SOURCE_DIR}/kernelsrc/tree_files.txt" BPFDIFF_KERNEL_TREE_FILES REGEX "^[^#]")
list(APPEND BPFDIFF_KERNEL_TREE_FILES tools/include/linux/kernel.h tools/include/uapi/linux/bpf.h)

# The tree's version from its Makefile ("6.12.118"), into OUT.
function(bpfdiff_kernel_version tree out)
  file(STRINGS "${tree}/Makefile" lines REGEX "^(VERSION|PATCHLEVEL|SUBLEVEL) = ")
  set(version "")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^[A-Z]+ = " "" value "${line}")
    if(version STREQUAL "")
      set(version "${value}")
    else()
      string(APPEND version ".${value}")
    endif()
  endforeach()
  set(${out} "${version}" PARENT_SCOPE)
endfunction()

set(_tree "${BPFDIFF_KERNEL_SOURCE}")
if(_tree STREQUAL "" AND DEFINED ENV{BPFDIFF_KERNEL_SOURCE})
  set(_tree "$ENV{BPFDIFF_KERNEL_SOURCE}")
endif()
# A tree someone named is the tree they want tested: one that is not
# whole stops the configure (below), where the default cache may be
# absent and the build goes on without the kernel's engines.
set(_named_tree OFF)
if(NOT _tree STREQUAL "")
  set(_named_tree ON)
endif()
if(_tree STREQUAL "")
  if(DEFINED ENV{XDG_CACHE_HOME})
    set(_tree "$ENV{XDG_CACHE_HOME}/bpfdiff/linux-source-6.12")
  else()
    set(_tree "$ENV{HOME}/.cache/bpfdiff/linux-source-6.12")
  endif()
endif()

set(_missing "")
foreach(f IN LISTS BPFDIFF_KERNEL_TREE_FILES)
  if(NOT EXISTS "${_tree}/${f}")
    list(APPEND _missing "${f}")
  endif()
endforeach()

set(BPFDIFF_HAVE_KERNEL_JIT OFF)
if(BPFDIFF_KERNEL_JIT STREQUAL "OFF")
  message(STATUS "bpfdiff: the kernel's arm64 JIT is off (BPFDIFF_KERNEL_JIT=OFF)")
elseif(_missing)
  list(GET _missing 0 _first)
  set(_why "no Linux tree at ${_tree} (${_first} is missing): run ci/kernel_source.sh, or set BPFDIFF_KERNEL_SOURCE to a tree")
  if(_named_tree)
    message(FATAL_ERROR "bpfdiff: the Linux tree ${_tree} lacks ${_first}, which the build reads "
                        "(kernelsrc/tree_files.txt lists them all; missing: ${_missing})")
  endif()
  if(BPFDIFF_KERNEL_JIT STREQUAL "ON")
    message(FATAL_ERROR "bpfdiff: ${_why}")
  endif()
  message(STATUS "bpfdiff: the kernel engines are not built: ${_why}")
else()
  get_filename_component(BPFDIFF_KERNEL_TREE "${_tree}" REALPATH)
  bpfdiff_kernel_version("${BPFDIFF_KERNEL_TREE}" BPFDIFF_KERNEL_VERSION)
  set(BPFDIFF_HAVE_KERNEL_JIT ON)
  message(STATUS "bpfdiff: the kernel's arm64 JIT from ${BPFDIFF_KERNEL_TREE} (Linux ${BPFDIFF_KERNEL_VERSION})")
endif()

# Further trees, each compiled into a bpfdiff of its own
# (cli/bpfdiff-linux-<version>) and linked beside the build's own tree into
# every executable of the build (kernel-jit@<version>: kernelsrc/
# CMakeLists.txt): BPFDIFF_EXTRA_KERNEL_SOURCES, a list of trees. Unset, a
# build that reads the default tree takes the other tree ci/setup.sh
# extracts (linux-source-6.1, when it is there); a build pointed at a tree
# takes none, and so does the coverage preset (source coverage keys its
# records by function name, which two trees share). Each entry of BPFDIFF_EXTRA_KERNEL_TREES
# is "SUFFIX|TREE|VERSION" (kernelsrc/CMakeLists.txt).
set(BPFDIFF_EXTRA_KERNEL_TREES "")
if(BPFDIFF_HAVE_KERNEL_JIT)
  if(DEFINED BPFDIFF_EXTRA_KERNEL_SOURCES)
    set(_extras "${BPFDIFF_EXTRA_KERNEL_SOURCES}")
  elseif(NOT _named_tree)
    get_filename_component(_cache "${_tree}" DIRECTORY)
    set(_extras "")
    if(EXISTS "${_cache}/linux-source-6.1/arch/arm64/net/bpf_jit_comp.c")
      set(_extras "${_cache}/linux-source-6.1")
    endif()
  endif()
  foreach(_extra IN LISTS _extras)
    foreach(f IN LISTS BPFDIFF_KERNEL_TREE_FILES)
      if(NOT EXISTS "${_extra}/${f}")
        message(FATAL_ERROR "bpfdiff: the Linux tree ${_extra} (BPFDIFF_EXTRA_KERNEL_SOURCES) lacks ${f}, which "
                            "the build reads (kernelsrc/tree_files.txt)")
      endif()
    endforeach()
    get_filename_component(_extra_real "${_extra}" REALPATH)
    if(_extra_real STREQUAL BPFDIFF_KERNEL_TREE)
      continue()
    endif()
    bpfdiff_kernel_version("${_extra_real}" _version)
    if(_version STREQUAL BPFDIFF_KERNEL_VERSION)
      message(FATAL_ERROR "bpfdiff: ${_extra_real} is Linux ${_version}, as the build's own tree is: each tree's "
                          "bpfdiff is named for its version")
    endif()
    string(REPLACE "." "_" _suffix "_${_version}")
    list(APPEND BPFDIFF_EXTRA_KERNEL_TREES "${_suffix}|${_extra_real}|${_version}")
    message(STATUS "bpfdiff: also the kernel's arm64 JIT from ${_extra_real} (Linux ${_version}): "
                   "cli/bpfdiff-linux-${_version}")
  endforeach()
endif()
# What links the kernel's code links the tree its target names
# (BPFDIFF_TREE: a suffix above), else the build's own.
set(BPFDIFF_KERNELSRC_LINK
    "$<IF:$<BOOL:$<TARGET_PROPERTY:BPFDIFF_TREE>>,bpfdiff_kernelsrc$<TARGET_PROPERTY:BPFDIFF_TREE>,bpfdiff_kernelsrc>")
set(BPFDIFF_KERNEL_TEST_BPF_LINK
    "$<IF:$<BOOL:$<TARGET_PROPERTY:BPFDIFF_TREE>>,bpfdiff_kernel_test_bpf$<TARGET_PROPERTY:BPFDIFF_TREE>,bpfdiff_kernel_test_bpf>")
