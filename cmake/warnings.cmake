# Warnings every target of ours is built with. Third-party headers come in as
# SYSTEM includes so that they cannot break a -Werror build.
add_library(bpfdiff_warnings INTERFACE)
target_compile_options(bpfdiff_warnings INTERFACE
  -Wall -Wextra -Wshadow -Wnon-virtual-dtor -Wold-style-cast -Wcast-align
  -Woverloaded-virtual -Wimplicit-fallthrough -Wmissing-declarations
  -Wnull-dereference -Wdouble-promotion -Wformat=2)
if(BPFDIFF_WERROR)
  target_compile_options(bpfdiff_warnings INTERFACE -Werror)
endif()
