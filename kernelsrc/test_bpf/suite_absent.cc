// Without a Linux tree there is no lib/test_bpf.c to run: Open() says how
// to get one, and nothing else is reachable.
#include "kernelsrc/test_bpf/suite.h"

namespace bpfdiff::kernelsrc {

Result<TestBpfFile> TestBpfFile::Open(std::string_view) {
  return Fail("this bpfdiff was built without a Linux tree, so it has no lib/test_bpf.c: run "
              "ci/kernel_source.sh (Debian's linux-source-6.12) or configure with "
              "-DBPFDIFF_KERNEL_SOURCE=<tree>, then build again");
}

int TestBpfFile::Count(TestBpfSuite) const { return 0; }
TestBpfMarkers TestBpfFile::Markers() const { return {}; }
Result<std::pair<int, int>> TestBpfFile::Select(TestBpfSuite, const TestBpfSelection&) const {
  return Fail("no lib/test_bpf.c in this build");
}
TestBpfCase TestBpfFile::Case(int) const { return {}; }
Result<std::vector<isa::Insn>> TestBpfFile::Program(int) const { return Fail("no lib/test_bpf.c in this build"); }
Result<std::vector<uint8_t>> TestBpfFile::Context(int, int) const { return Fail("no lib/test_bpf.c in this build"); }
TestBpfTailCall TestBpfFile::TailCall(int) const { return {}; }

}  // namespace bpfdiff::kernelsrc
