#!/usr/bin/env python3
"""The OSS-Fuzz and ClusterFuzzLite files, parsed and checked against each
other and against the fuzz targets the build declares.

  oss_fuzz_files_test.py --source-dir DIR --manifest BUILD/fuzz_targets.tsv

- project.yaml (ci/oss-fuzz/, .clusterfuzzlite/): the keys OSS-Fuzz and
  ClusterFuzzLite read, and a base_os_version that matches the Dockerfile's
  FROM tag (google/oss-fuzz infra/ci/check_base_os.py);
- both Dockerfiles: the same packages, the same pinned clones of Unicorn
  and of VIXL (whose source build.sh hands to the build), the same
  kernel.org Linux tarball with its files' hashes pinned, the project
  where build.sh looks for it, and build.sh copied to $SRC;
- build.sh builds all_fuzzers and copies what the build's fuzz_targets.tsv
  lists, and that list holds every bpfdiff_fuzz_target() of the checkout;
  .clusterfuzzlite/build.sh runs that build.sh;
- the workflows (.github/workflows/): pull requests in code-change mode,
  batch fuzzing on a schedule with pruning after it, coverage from a
  SANITIZER=coverage build; each run_fuzzers step follows a build_fuzzers
  step of the same job with the same sanitizer.

Every check returns the problems it finds; the tests assert that the tree
has none, and that a broken copy has the problem they planted.
"""
import argparse
import copy
import glob
import importlib.util
import os
import re
import sys
import unittest

import yaml

UNICORN_TAG = "2.1.4"
UNICORN_COMMIT = "8028ec436f2d9376525352dd38ed9ed6b9f6be10"
# The release of Debian 12's libvixl-dev, which the tests run.
VIXL_TAG = "5.1.0"
VIXL_COMMIT = "b97550bedb1f2e668423b1cdd64a09e74e468214"
# infra/ci/check_base_os.py (google/oss-fuzz @ 955c6866): base_os_version
# -> the tag the Dockerfile's FROM must name.
BASE_OS_TO_DOCKER_TAG = {"legacy": "latest", "ubuntu-24-04": "ubuntu-24-04"}
BUILD_ACTION = "google/clusterfuzzlite/actions/build_fuzzers@v1"
RUN_ACTION = "google/clusterfuzzlite/actions/run_fuzzers@v1"
SOURCE_DIR = None
MANIFEST = None
KERNEL_JIT = True


def read(path):
  with open(os.path.join(SOURCE_DIR, path), encoding="utf-8") as f:
    return f.read()


def load_yaml(path):
  return yaml.safe_load(read(path))


# --- project.yaml and Dockerfile ---------------------------------------------

def dockerfile_instructions(text):
  """(INSTRUCTION, argument) pairs, continuation lines joined."""
  joined = re.sub(r"\\\n\s*", " ", text)
  pairs = []
  for line in joined.splitlines():
    line = line.strip()
    if line and not line.startswith("#"):
      instruction, _, argument = line.partition(" ")
      pairs.append((instruction.upper(), argument.strip()))
  return pairs


def base_os_problems(project, dockerfile):
  version = project.get("base_os_version", "legacy")
  if version not in BASE_OS_TO_DOCKER_TAG:
    return [f"base_os_version {version!r} is not one OSS-Fuzz supports"]
  froms = [arg for ins, arg in dockerfile_instructions(dockerfile) if ins == "FROM"]
  if not froms:
    return ["the Dockerfile has no FROM"]
  image, _, tag = froms[0].partition(":")
  problems = []
  if image != "gcr.io/oss-fuzz-base/base-builder":
    problems.append(f"FROM {image}: not OSS-Fuzz's base-builder")
  if tag != BASE_OS_TO_DOCKER_TAG[version]:
    problems.append(f"FROM tag {tag!r} does not match base_os_version {version!r} "
                    f"(expects {BASE_OS_TO_DOCKER_TAG[version]!r})")
  return problems


def oss_fuzz_project_problems(project):
  problems = []
  for key in ("homepage", "main_repo", "primary_contact"):
    if not project.get(key):
      problems.append(f"project.yaml has no {key}")
  if project.get("language") != "c++":
    problems.append(f"language is {project.get('language')!r}, not c++")
  if "libfuzzer" not in project.get("fuzzing_engines", ["libfuzzer"]):
    problems.append("fuzzing_engines leaves out libfuzzer")
  sanitizers = set(project.get("sanitizers", ["address", "undefined"]))
  if not {"address", "undefined"} <= sanitizers:
    problems.append(f"sanitizers {sorted(sanitizers)} leave out address or undefined")
  return problems


def apt_packages(dockerfile):
  packages = set()
  for instruction, argument in dockerfile_instructions(dockerfile):
    for match in re.finditer(r"apt-get install -y ([^&;]*)", argument if instruction == "RUN" else ""):
      packages.update(match.group(1).split())
  return packages


def pinned_clone_problems(dockerfile, name, repository, tag, commit, directory):
  """The image clones `repository` at release `tag`, checks the commit, into
  $SRC/`directory` (where build.sh looks)."""
  runs = [arg for ins, arg in dockerfile_instructions(dockerfile) if ins == "RUN"]
  clone = next((r for r in runs if repository in r), None)
  if clone is None:
    return [f"no clone of {name}"]
  problems = []
  if f"--branch {tag} " not in clone:
    problems.append(f"{name} is not cloned at its release {tag}")
  if f"= {commit}" not in clone:
    problems.append(f"the {name} clone is not checked to be {commit}")
  if f"$SRC/{directory}" not in clone:
    problems.append(f"{name} is not cloned into $SRC/{directory}, where build.sh looks")
  return problems


def unicorn_problems(dockerfile):
  return pinned_clone_problems(dockerfile, "Unicorn", "unicorn-engine/unicorn", UNICORN_TAG, UNICORN_COMMIT,
                               "unicorn")


def vixl_problems(dockerfile, build_sh):
  problems = pinned_clone_problems(dockerfile, "VIXL", "github.com/Linaro/vixl", VIXL_TAG, VIXL_COMMIT, "vixl")
  if '-DBPFDIFF_VIXL_SOURCE="$vixl_source"' not in build_sh or 'vixl_source="$SRC/vixl"' not in build_sh:
    problems.append("build.sh does not hand $SRC/vixl to the build (-DBPFDIFF_VIXL_SOURCE)")
  return problems


def kernel_problems(dockerfile, build_sh, tree_files, pins):
  """The Linux tarball the image downloads into $SRC, its pinned hashes
  (ci/oss-fuzz/linux-<version>.sha256, `pins`: name -> text) covering the
  tree's files that the build reads (kernelsrc/tree_files.txt, but the
  Makefile, which names the version), and build.sh checking them."""
  runs = [arg for ins, arg in dockerfile_instructions(dockerfile) if ins == "RUN"]
  fetched = [m for r in runs for m in re.findall(r"-o \$SRC/(linux-[\d.]+)\.tar\.xz https://cdn\.kernel\.org/\S+/\1\.tar\.xz", r)]
  if len(fetched) != 1:
    return ["the image does not download one kernel.org Linux tarball into $SRC"]
  pin = f"{fetched[0]}.sha256"
  if pin not in pins:
    return [f"no ci/oss-fuzz/{pin} for the image's {fetched[0]}.tar.xz"]
  problems = []
  pinned = {line.split()[1] for line in pins[pin].splitlines() if line.strip()}
  wanted = {f for f in tree_files if f != "Makefile"}
  problems += [f"{pin} does not pin {f}" for f in sorted(wanted - pinned)]
  problems += [f"{pin} pins {f}, which the build does not read" for f in sorted(pinned - wanted)]
  if f"ci/oss-fuzz/{pin}" not in build_sh:
    problems.append(f"build.sh does not check the tree against {pin}")
  if "-DBPFDIFF_KERNEL_JIT=ON" not in build_sh:
    problems.append("build.sh does not require the kernel's JIT (-DBPFDIFF_KERNEL_JIT=ON)")
  return problems


def read_kernel_inputs():
  tree_files = [l.strip() for l in read("kernelsrc/tree_files.txt").splitlines()
                if l.strip() and not l.startswith("#")]
  pins = {os.path.basename(p): read(os.path.relpath(p, SOURCE_DIR))
          for p in glob.glob(os.path.join(SOURCE_DIR, "ci", "oss-fuzz", "linux-*.sha256"))}
  return tree_files, pins


def source_layout_problems(dockerfile, build_script):
  """The project in $SRC/bpfdiff and the build script copied to $SRC."""
  pairs = dockerfile_instructions(dockerfile)
  problems = []
  if not any(ins in ("RUN", "COPY") and re.search(r"\$SRC/bpfdiff$", arg) for ins, arg in pairs):
    problems.append("the project does not land in $SRC/bpfdiff")
  if ("COPY", f"{build_script} $SRC/") not in pairs:
    problems.append(f"{build_script} is not copied to $SRC/")
  return problems


# --- build.sh and the fuzz targets --------------------------------------------

def check_out():
  """ci/oss-fuzz/check_out.py, whose declared_targets the OSS-Fuzz check uses."""
  spec = importlib.util.spec_from_file_location("check_out", os.path.join(SOURCE_DIR, "ci", "oss-fuzz", "check_out.py"))
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module


def manifest_targets(text):
  return {line.split("\t")[0] for line in text.splitlines() if line.strip()}


def build_script_problems(build_sh, declared, manifest):
  problems = []
  if not re.search(r"cmake --build \S+ --target all_fuzzers", build_sh):
    problems.append("build.sh does not build all_fuzzers")
  if "fuzz_targets.tsv" not in build_sh:
    problems.append("build.sh does not copy what fuzz_targets.tsv lists")
  for variable in ("CC", "CXX", "CFLAGS", "CXXFLAGS", "LIB_FUZZING_ENGINE", "SRC", "OUT", "WORK"):
    if not re.search(r"\$\{?" + variable + r"\b", build_sh):
      problems.append(f"build.sh ignores ${variable}")
  problems += [f"{name}: declared in the checkout but not in the build's fuzz_targets.tsv"
               for name in sorted(declared - manifest)]
  problems += [f"{name}: in fuzz_targets.tsv but declared nowhere in the checkout"
               for name in sorted(manifest - declared)]
  return problems


# --- workflows -----------------------------------------------------------------

def triggers(workflow):
  # YAML 1.1 reads the key `on` as True.
  on = workflow.get("on", workflow.get(True)) or {}
  return set(on) if isinstance(on, (dict, list)) else {on}


def job_fuzz_runs(job):
  """(mode, sanitizer, problems) of each run_fuzzers step of a job."""
  runs, built = [], []
  for step in job.get("steps", []):
    uses, inputs = step.get("uses", ""), step.get("with", {}) or {}
    sanitizer = inputs.get("sanitizer", "address")
    if uses.startswith("google/clusterfuzzlite/actions/build_fuzzers"):
      problems = [] if uses == BUILD_ACTION else [f"{uses}: not {BUILD_ACTION}"]
      if inputs.get("language") != "c++":
        problems.append("build_fuzzers without language: c++")
      built.append(sanitizer)
      runs.append((None, sanitizer, problems))
    elif uses.startswith("google/clusterfuzzlite/actions/run_fuzzers"):
      problems = [] if uses == RUN_ACTION else [f"{uses}: not {RUN_ACTION}"]
      if sanitizer not in built:
        problems.append(f"run_fuzzers ({sanitizer}) with no build_fuzzers of that sanitizer before it")
      if not inputs.get("fuzz-seconds"):
        problems.append("run_fuzzers without fuzz-seconds")
      runs.append((inputs.get("mode", "code-change"), sanitizer, problems))
  return runs


def expand_matrix(job):
  """The job once per sanitizer of its matrix (or as it is)."""
  sanitizers = job.get("strategy", {}).get("matrix", {}).get("sanitizer")
  if not sanitizers:
    return [job]
  text = yaml.safe_dump(job)
  return [yaml.safe_load(text.replace("${{ matrix.sanitizer }}", s)) for s in sanitizers]


def workflow_problems(workflows):
  """workflows: {file name: parsed YAML}."""
  problems, modes = [], {}
  for name, workflow in sorted(workflows.items()):
    on = triggers(workflow)
    for job_name, job in (workflow.get("jobs") or {}).items():
      for variant in expand_matrix(job):
        for mode, sanitizer, step_problems in job_fuzz_runs(variant):
          problems += [f"{name}: {job_name}: {p}" for p in step_problems]
          if mode is not None:
            modes.setdefault(mode, []).append((name, on, sanitizer))
  wanted = {"code-change": "pull_request", "batch": "schedule", "prune": "schedule",
            "coverage": "schedule"}
  for mode, trigger in wanted.items():
    if not any(trigger in on for _, on, _ in modes.get(mode, [])):
      problems.append(f"no workflow runs mode {mode!r} on {trigger}")
  for name, _, sanitizer in modes.get("coverage", []):
    if sanitizer != "coverage":
      problems.append(f"{name}: coverage mode on a {sanitizer} build")
  return problems


def load_workflows():
  pattern = os.path.join(SOURCE_DIR, ".github", "workflows", "*.yml")
  return {os.path.basename(p): load_yaml(os.path.relpath(p, SOURCE_DIR))
          for p in sorted(glob.glob(pattern))}


# --- tests ---------------------------------------------------------------------

class ProjectFiles(unittest.TestCase):

  def test_oss_fuzz_project_and_dockerfile(self):
    project = load_yaml("ci/oss-fuzz/project.yaml")
    dockerfile = read("ci/oss-fuzz/Dockerfile")
    self.assertEqual(oss_fuzz_project_problems(project), [])
    self.assertEqual(base_os_problems(project, dockerfile), [])
    self.assertEqual(unicorn_problems(dockerfile), [])
    self.assertEqual(vixl_problems(dockerfile, read("ci/oss-fuzz/build.sh")), [])
    self.assertEqual(source_layout_problems(dockerfile, "build.sh"), [])
    self.assertEqual(kernel_problems(dockerfile, read("ci/oss-fuzz/build.sh"), *read_kernel_inputs()), [])

  def test_clusterfuzzlite_project_and_dockerfile(self):
    project = load_yaml(".clusterfuzzlite/project.yaml")
    dockerfile = read(".clusterfuzzlite/Dockerfile")
    self.assertEqual(project.get("language"), "c++")
    self.assertEqual(base_os_problems(project, dockerfile), [])
    self.assertEqual(unicorn_problems(dockerfile), [])
    self.assertEqual(vixl_problems(dockerfile, read("ci/oss-fuzz/build.sh")), [])
    self.assertEqual(source_layout_problems(dockerfile, ".clusterfuzzlite/build.sh"), [])
    self.assertEqual(kernel_problems(dockerfile, read("ci/oss-fuzz/build.sh"), *read_kernel_inputs()), [])

  def test_both_images_install_the_same(self):
    oss_fuzz = apt_packages(read("ci/oss-fuzz/Dockerfile"))
    clusterfuzzlite = apt_packages(read(".clusterfuzzlite/Dockerfile"))
    self.assertIn("ninja-build", oss_fuzz)
    self.assertEqual(oss_fuzz, clusterfuzzlite)

  def test_clusterfuzzlite_runs_the_oss_fuzz_build(self):
    script = read(".clusterfuzzlite/build.sh")
    commands = [l for l in script.splitlines() if l.strip() and not l.startswith("#")]
    self.assertEqual(commands, ['exec bash -eux "$SRC/bpfdiff/ci/oss-fuzz/build.sh"'])

  def test_build_sh_copies_every_declared_target(self):
    declared = check_out().declared_targets(SOURCE_DIR, kernel=KERNEL_JIT)
    self.assertGreaterEqual(len(declared), 5)
    with open(MANIFEST, encoding="utf-8") as f:
      manifest = manifest_targets(f.read())
    self.assertEqual(build_script_problems(read("ci/oss-fuzz/build.sh"), declared, manifest), [])

  def test_workflows(self):
    workflows = load_workflows()
    self.assertGreaterEqual(len(workflows), 3)
    self.assertEqual(workflow_problems(workflows), [])


class TheChecksFail(unittest.TestCase):
  """Each check, on a copy broken on purpose."""

  def test_a_from_tag_that_does_not_match(self):
    dockerfile = read(".clusterfuzzlite/Dockerfile").replace(":ubuntu-24-04", ":v1")
    problems = base_os_problems(load_yaml(".clusterfuzzlite/project.yaml"), dockerfile)
    self.assertEqual(len(problems), 1)
    self.assertIn("does not match base_os_version", problems[0])

  def test_unicorn_from_its_dev_branch(self):
    dockerfile = read("ci/oss-fuzz/Dockerfile").replace(f"--branch {UNICORN_TAG}", "--branch dev")
    self.assertIn(f"Unicorn is not cloned at its release {UNICORN_TAG}", unicorn_problems(dockerfile))

  def test_vixl_unpinned_and_not_handed_to_the_build(self):
    dockerfile = read("ci/oss-fuzz/Dockerfile").replace(f"--branch {VIXL_TAG}", "--branch main")
    build_sh = read("ci/oss-fuzz/build.sh").replace('-DBPFDIFF_VIXL_SOURCE="$vixl_source"', "")
    self.assertEqual(vixl_problems(dockerfile, build_sh),
                     [f"VIXL is not cloned at its release {VIXL_TAG}",
                      "build.sh does not hand $SRC/vixl to the build (-DBPFDIFF_VIXL_SOURCE)"])

  def test_a_target_build_sh_would_not_copy(self):
    problems = build_script_problems(read("ci/oss-fuzz/build.sh"), {"a_fuzzer", "b_fuzzer"},
                                     {"a_fuzzer"})
    self.assertEqual(problems, ["b_fuzzer: declared in the checkout but not in the build's "
                                "fuzz_targets.tsv"])

  def test_a_kernel_tarball_without_its_pins(self):
    dockerfile = read("ci/oss-fuzz/Dockerfile").replace("6.12.118", "6.12.119")
    tree_files, pins = read_kernel_inputs()
    self.assertEqual(kernel_problems(dockerfile, read("ci/oss-fuzz/build.sh"), tree_files, pins),
                     ["no ci/oss-fuzz/linux-6.12.119.sha256 for the image's linux-6.12.119.tar.xz"])

  def test_pins_that_leave_out_a_file_the_build_reads(self):
    tree_files, pins = read_kernel_inputs()
    pins = {name: "\n".join(l for l in text.splitlines() if "bpf_jit_comp.c" not in l)
            for name, text in pins.items()}
    self.assertEqual(kernel_problems(read("ci/oss-fuzz/Dockerfile"), read("ci/oss-fuzz/build.sh"), tree_files, pins),
                     ["linux-6.12.118.sha256 does not pin arch/arm64/net/bpf_jit_comp.c"])

  def test_a_kernel_target_a_build_without_a_tree_lacks(self):
    with_kernel = check_out().declared_targets(SOURCE_DIR, kernel=True)
    without = check_out().declared_targets(SOURCE_DIR, kernel=False)
    self.assertEqual(with_kernel - without, {"diff_fuzzer_kernel", "pack_fuzzer_kernel", "trampoline_fuzzer"})

  def test_a_build_sh_with_a_list_kept_by_hand(self):
    build_sh = "for t in a_fuzzer; do cp $WORK/$t $OUT/; done\n"
    problems = build_script_problems(build_sh, set(), set())
    self.assertIn("build.sh does not build all_fuzzers", problems)
    self.assertIn("build.sh ignores $LIB_FUZZING_ENGINE", problems)

  def test_no_pruning(self):
    workflows = copy.deepcopy(load_workflows())
    for workflow in workflows.values():
      workflow["jobs"] = {name: job for name, job in workflow["jobs"].items()
                          if "prune" not in yaml.safe_dump(job)}
    self.assertEqual(workflow_problems(workflows), ["no workflow runs mode 'prune' on schedule"])

  def test_running_a_sanitizer_that_was_not_built(self):
    workflows = copy.deepcopy(load_workflows())
    job = workflows["cflite_pr.yml"]["jobs"]["PR"]
    job["strategy"]["matrix"]["sanitizer"] = ["address"]
    job["steps"][1]["with"]["sanitizer"] = "memory"
    problems = workflow_problems(workflows)
    self.assertEqual(problems, ["cflite_pr.yml: PR: run_fuzzers (memory) with no build_fuzzers "
                                "of that sanitizer before it"])


if __name__ == "__main__":
  parser = argparse.ArgumentParser()
  parser.add_argument("--source-dir", required=True)
  parser.add_argument("--manifest", required=True)
  parser.add_argument("--kernel-jit", choices=("ON", "OFF"), required=True,
                      help="whether the build has the kernel's JIT (and so its fuzz targets)")
  args, rest = parser.parse_known_args()
  SOURCE_DIR, MANIFEST = os.path.abspath(args.source_dir), args.manifest
  KERNEL_JIT = args.kernel_jit == "ON"
  unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
