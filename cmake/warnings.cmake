# Warnings every target of ours is built with. Third-party headers come in as
# SYSTEM includes so that they cannot break a -Werror build.
add_library(bpfdiff_warnings INTERFACE)
target_compile_options(bpfdiff_warnings INTERFACE
  -Wall -Wextra -Wshadow -Wnon-virtual-dtor -Wold-style-cast -Wcast-align
  -Woverloaded-virtual -Wimplicit-fallthrough -Wmissing-declarations
  -Wdouble-promotion -Wformat=2)
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  target_compile_options(bpfdiff_warnings INTERFACE -Wnull-dereference)
else()
  # GCC 12 reports -Wnull-dereference inside libstdc++'s own inlined string
  # and streambuf code, and -Wmissing-field-initializers for C++20
  # designated initializers that leave members to their defaults on purpose
  # (GCC 14 no longer does); neither points at our code.
  target_compile_options(bpfdiff_warnings INTERFACE -Wno-missing-field-initializers)
endif()
if(BPFDIFF_WERROR)
  target_compile_options(bpfdiff_warnings INTERFACE -Werror)
endif()
