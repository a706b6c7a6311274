// What the PyTorch bridge's source line costs per op, on the CPU.
//
//   gmp_pyframes [ITERATIONS [REPETITIONS]]     (default 1000000 5)
//
// profiler/torch/py.cpp runs in an embedded CPython against a fake `torch`
// written into a temporary folder (as tests/profiler/test_pybridge.cpp
// does). A loop in the program's own code calls a builtin ITERATIONS times,
// either directly (depth 0) or through DEPTH frames of a function in the
// fake torch/nn/functional.py (so the walk skips them as torch's), as
// model.forward -> torch.nn Linear.forward -> F.linear -> the op. Each
// builtin is one way an op can start:
//
//   nop         returns: the Python -> C call, the floor
//   release     releases the GIL and takes it back (PyEval_SaveThread and
//               PyEval_RestoreThread), as PyTorch's bindings do around an op
//   op_off      release + gmp_py::op_frame_ids(frames=false): an outermost
//               op's start with source lines off (bridge.cpp forward_start)
//   gil         release + PyGILState_Ensure + PyGILState_Release: the round
//               trip op_frame_ids makes to walk the stack
//   op_line     release + op_frame_ids(frames=true, stack=false): lines on
//   op_stack    release + op_frame_ids(frames=true, stack=true): whole stacks
//   walk        gmp_py::frame_ids(stack=false) with the GIL held
//   walk_stack  gmp_py::frame_ids(stack=true) with the GIL held
//   walk_twice  frame_ids(stack=false) twice: Python 3.11+ makes a frame
//               object for each frame the first walk passes; the second
//               walk's extra time is the walk without that
//
// Every (builtin, depth) is timed with a steady clock around the whole loop,
// in every repetition, interleaved; a builtin's cost is its time less
// nop's at the same depth in the same repetition, and the table gives the
// median, least and most of that over the repetitions. Frames and stacks
// are interned in a warm-up first: the timed loops find every id cached.
// A last case times a line seen for the first time: 1000 distinct call
// sites, 10 in each of 100 functions, called once with op_line, less the
// same sites called again (the text is made and interned once per site,
// through a fake host's hash map, not the profiler's string table; each
// function's file is checked once).
//
// Exits non-zero only when the bridge gives a wrong or missing frame,
// never on timing.
#include <Python.h>  // first, as Python asks

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "gmemprof/trace_format.h"
#include "py.h"

namespace {

// ---- the fake host: interning only --------------------------------------------

std::unordered_map<std::string, uint32_t> g_ids;
std::vector<std::string> g_texts;  // id - 1 -> text

uint32_t h_intern(const char* s, size_t n) {
  auto it = g_ids.emplace(std::string(s, n), static_cast<uint32_t>(g_texts.size() + 1));
  if (it.second) g_texts.push_back(it.first->first);
  return it.first->second;
}
void h_origin(gmp_bridge_origin* o) { memset(o, 0, sizeof *o); }
void h_block(const gmp_bridge_origin*, unsigned, unsigned, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, unsigned,
             uint64_t) {}
void h_log(int, const char* line) { fprintf(stderr, "gmp_pyframes: the bridge says: %s\n", line); }
void h_op_begin(const char*) {}
void h_op_end() {}
void h_optimizer_step(const char*, int) {}
void h_range_begin(unsigned, const char*) {}
void h_range_end() {}
void h_block_at(const gmp_bridge_origin*, unsigned, unsigned, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t,
                unsigned, uint64_t, uint32_t, uint32_t) {}

const gmp_bridge_host kHost = {GMP_BRIDGE_ABI,  sizeof(gmp_bridge_host), h_origin,      h_block,
                               h_log,           h_op_begin,              h_op_end,      h_optimizer_step,
                               h_range_begin,   h_range_end,             h_intern,      h_block_at};
std::atomic<const gmp_bridge_host*> g_host{&kHost};
// modules off: no hooks to register; op_frame_ids with frames off returns
// before the GIL, as it does once the hooks are in
std::atomic<unsigned> g_watching{GMP_BRIDGE_WATCH_FRAMES};

std::string text_of(uint32_t id) { return id && id <= g_texts.size() ? g_texts[id - 1] : std::string("-"); }

// ---- the builtins -------------------------------------------------------------

uint32_t g_frame, g_stack;  // the last ids a builtin got

PyObject* b_nop(PyObject*, PyObject*) { Py_RETURN_NONE; }

PyObject* b_release(PyObject*, PyObject*) {
  PyThreadState* ts = PyEval_SaveThread();
  PyEval_RestoreThread(ts);
  Py_RETURN_NONE;
}

PyObject* op(bool frames, bool stack) {
  PyThreadState* ts = PyEval_SaveThread();
  gmp_py::op_frame_ids(frames, stack, &g_frame, &g_stack);
  PyEval_RestoreThread(ts);
  Py_RETURN_NONE;
}
PyObject* b_op_off(PyObject*, PyObject*) { return op(false, false); }
PyObject* b_op_line(PyObject*, PyObject*) { return op(true, false); }
PyObject* b_op_stack(PyObject*, PyObject*) { return op(true, true); }

PyObject* b_gil(PyObject*, PyObject*) {
  PyThreadState* ts = PyEval_SaveThread();
  PyGILState_STATE g = PyGILState_Ensure();
  PyGILState_Release(g);
  PyEval_RestoreThread(ts);
  Py_RETURN_NONE;
}

PyObject* b_walk(PyObject*, PyObject*) {
  gmp_py::frame_ids(false, &g_frame, &g_stack);
  Py_RETURN_NONE;
}
PyObject* b_walk_stack(PyObject*, PyObject*) {
  gmp_py::frame_ids(true, &g_frame, &g_stack);
  Py_RETURN_NONE;
}
// the second walk finds the frame objects the first one made
PyObject* b_walk_twice(PyObject*, PyObject*) {
  gmp_py::frame_ids(false, &g_frame, &g_stack);
  gmp_py::frame_ids(false, &g_frame, &g_stack);
  Py_RETURN_NONE;
}

enum Case { NOP, RELEASE, OP_OFF, GIL, OP_LINE, OP_STACK, WALK, WALK_STACK, WALK_TWICE, NCASES };
const char* const kNames[NCASES] = {"nop",      "release", "op_off",     "gil",       "op_line",
                                    "op_stack", "walk",    "walk_stack", "walk_twice"};
PyCFunction const kFns[NCASES] = {b_nop,      b_release, b_op_off,     b_gil,       b_op_line,
                                  b_op_stack, b_walk,    b_walk_stack, b_walk_twice};

PyMethodDef g_methods[NCASES + 1];
PyModuleDef g_module = {PyModuleDef_HEAD_INIT, "_gmp_bench", nullptr, -1, g_methods, nullptr, nullptr, nullptr, nullptr};
PyObject* init_module() {
  for (int c = 0; c < NCASES; c++) g_methods[c] = PyMethodDef{kNames[c], kFns[c], METH_NOARGS, nullptr};
  g_methods[NCASES] = PyMethodDef{nullptr, nullptr, 0, nullptr};
  return PyModule_Create(&g_module);
}

// ---- the fake torch and the program ---------------------------------------------

const char kFunctional[] = R"(# fake torch.nn.functional (bench/pyframes.cpp)
def chain(depth, fn):
    # torch's own frames between the program's line and the op
    if depth <= 1:
        return fn()
    return chain(depth - 1, fn)
)";

// The program's own code, compiled under the name kUserFile.
const char kUserFile[] = "pyframes_user.py";
const char kUser[] = R"(import torch.nn.functional as F


def loop(n, fn, depth):
    if depth == 0:
        for _ in range(n):
            fn()
    else:
        chain = F.chain
        for _ in range(n):
            chain(depth, fn)
)";
constexpr int kDirectLine = 7, kChainLine = 11;  // the two calls' lines in kUser

std::string g_tmp;
std::vector<std::string> g_made;

bool put(const std::string& rel, const char* text) {
  std::string p = g_tmp + "/" + rel;
  FILE* f = fopen(p.c_str(), "w");
  if (!f) return false;
  g_made.push_back(p);
  bool ok = fputs(text, f) >= 0;
  return fclose(f) == 0 && ok;
}

bool mkdir_in(const std::string& rel) {
  std::string p = g_tmp + "/" + rel;
  if (mkdir(p.c_str(), 0700) != 0) return false;
  g_made.push_back(p);
  return true;
}

bool write_fake_torch() {
  const char* base = getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/gmp_pyframes_XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back(0);
  if (!mkdtemp(buf.data())) {
    fprintf(stderr, "gmp_pyframes: cannot make a folder like %s: set TMPDIR to a writable folder\n", tmpl.c_str());
    return false;
  }
  g_tmp = buf.data();
  bool ok = mkdir_in("torch") && mkdir_in("torch/nn") && put("torch/__init__.py", "from . import nn\n") &&
            put("torch/nn/__init__.py", "from . import functional\n") && put("torch/nn/functional.py", kFunctional);
  if (!ok) fprintf(stderr, "gmp_pyframes: cannot write the fake torch under %s\n", g_tmp.c_str());
  return ok;
}

void remove_fake_torch() {
  for (size_t i = g_made.size(); i > 0; i--) remove(g_made[i - 1].c_str());
  if (!g_tmp.empty()) rmdir(g_tmp.c_str());
}

bool py_ok(bool ok, const char* what) {
  if (ok) return true;
  if (PyErr_Occurred()) PyErr_Print();
  fprintf(stderr, "gmp_pyframes: %s failed\n", what);
  return false;
}

PyObject* compile_module(const char* name, const std::string& source, const char* file) {
  PyObject* code = Py_CompileString(source.c_str(), file, Py_file_input);
  if (!py_ok(code != nullptr, "compiling the program")) return nullptr;
  PyObject* m = PyImport_ExecCodeModuleEx(name, code, file);
  Py_DECREF(code);
  py_ok(m != nullptr, "running the program");
  return m;
}

// ---- timing -------------------------------------------------------------------

// ns per call of loop(n, fn, depth); < 0: Python raised
double time_loop(PyObject* loop, PyObject* fn, long n, int depth) {
  PyObject* args = Py_BuildValue("(lOi)", n, fn, depth);
  if (!args) return -1;
  auto t0 = std::chrono::steady_clock::now();
  PyObject* r = PyObject_CallObject(loop, args);
  auto t1 = std::chrono::steady_clock::now();
  Py_DECREF(args);
  if (!py_ok(r != nullptr, "the timed loop")) return -1;
  Py_DECREF(r);
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(n);
}

struct Stat {
  double median, min, max;
};
Stat stat_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  double med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  return Stat{med, v.front(), v.back()};
}

void row(const char* what, int depth, const std::vector<double>& v) {
  Stat s = stat_of(v);
  printf("%-44s %5d %10.1f %10.1f %10.1f\n", what, depth, s.median, s.min, s.max);
}

// The frame an op at depth must get: the loop's line, whatever torch frames
// lie between; with the stack, torch's frames first.
bool check_ids(int c, int depth) {
  if (c < OP_LINE) return true;  // no frame asked
  std::string want = std::string(kUserFile) + ":" + std::to_string(depth ? kChainLine : kDirectLine) + " loop";
  std::string got = text_of(g_frame);
  bool stack = c == OP_STACK || c == WALK_STACK;
  std::string whole = text_of(g_stack);
  size_t torch_frames = 0;
  for (size_t at = whole.find("functional.py:"); at != std::string::npos; at = whole.find("functional.py:", at + 1))
    torch_frames++;
  bool ok = got == want && (stack ? torch_frames == static_cast<size_t>(depth) : g_stack == 0);
  if (!ok)
    fprintf(stderr, "gmp_pyframes: %s at depth %d: frame '%s' (expected '%s'), stack with %zu torch frames\n",
            kNames[c], depth, got.c_str(), want.c_str(), torch_frames);
  return ok;
}

int run(long iters, int reps) {
  PyObject* user = compile_module("pyframes_user", kUser, kUserFile);
  PyObject* bench = user ? PyImport_ImportModule("_gmp_bench") : nullptr;
  PyObject* loop = user ? PyObject_GetAttrString(user, "loop") : nullptr;
  PyObject* fns[NCASES] = {};
  bool ok = py_ok(bench && loop, "importing the builtins");
  for (int c = 0; ok && c < NCASES; c++) ok = py_ok((fns[c] = PyObject_GetAttrString(bench, kNames[c])), kNames[c]);
  gmp_py::setup();  // learns torch's folder; the first op would do it

  const int depths[] = {0, 3, 10, 30};
  constexpr int kDepths = sizeof depths / sizeof depths[0];
  // warm-up: every frame and stack interned, each case checked once
  for (int d = 0; ok && d < kDepths; d++)
    for (int c = 0; ok && c < NCASES; c++) {
      g_frame = g_stack = 0;
      ok = time_loop(loop, fns[c], 100, depths[d]) >= 0 && check_ids(c, depths[d]);
    }

  std::vector<double> t[NCASES][kDepths];
  for (int r = 0; ok && r < reps; r++)
    for (int d = 0; ok && d < kDepths; d++)
      for (int i = 0; ok && i < NCASES; i++) {
        int c = (i + r) % NCASES;  // each case in each place of the order in turn
        double ns = time_loop(loop, fns[c], iters, depths[d]);
        ok = ns >= 0;
        t[c][d].push_back(ns);
      }

  // a line seen for the first time: kSites distinct call sites, once new,
  // once cached; new function names each repetition, so new texts
  constexpr int kFuncs = 100, kPerFunc = 10, kSites = kFuncs * kPerFunc;
  std::vector<double> first;
  for (int r = 0; ok && r < reps; r++) {
    std::string name = "sites_" + std::to_string(r), src, list;
    for (int i = 0; i < kFuncs; i++) {
      std::string fn = name + "_" + std::to_string(i);
      src += "def " + fn + "(fn):\n";
      for (int k = 0; k < kPerFunc; k++) src += "    fn()\n";
      list += fn + ", ";
    }
    src += "FUNCS = [" + list + "]\n\n\ndef " + name + "(fn):\n    for f in FUNCS:\n        f(fn)\n";
    PyObject* m = compile_module(("pyframes_" + name).c_str(), src, "pyframes_sites.py");
    PyObject* f = m ? PyObject_GetAttrString(m, name.c_str()) : nullptr;
    double ns[2] = {0, 0};
    size_t texts = g_texts.size();
    for (int k = 0; ok && f && k < 2; k++) {
      auto t0 = std::chrono::steady_clock::now();
      PyObject* res = PyObject_CallFunctionObjArgs(f, fns[OP_LINE], nullptr);
      auto t1 = std::chrono::steady_clock::now();
      ok = py_ok(res != nullptr, name.c_str());
      Py_XDECREF(res);
      ns[k] = std::chrono::duration<double, std::nano>(t1 - t0).count() / kSites;
    }
    ok = ok && f && g_texts.size() == texts + kSites;
    if (ok) first.push_back(ns[0] - ns[1]);
    else fprintf(stderr, "gmp_pyframes: %zu texts interned for %d new sites\n", g_texts.size() - texts, kSites);
    Py_XDECREF(f);
    Py_XDECREF(m);
  }

  if (ok) {
    printf("ns per call, %ld calls a loop, median / min / max of %d repetitions\n", iters, reps);
    printf("depth: torch frames between the program's line and the builtin\n\n");
    printf("%-44s %5s %10s %10s %10s\n", "what", "depth", "median", "min", "max");
    auto net = [&](int c, int d) {
      std::vector<double> v;
      for (size_t r = 0; r < t[c][d].size(); r++) v.push_back(t[c][d][r] - t[NOP][d][r]);
      return v;
    };
    auto diff = [&](int a, int b, int d) {
      std::vector<double> v;
      for (size_t r = 0; r < t[a][d].size(); r++) v.push_back(t[a][d][r] - t[b][d][r]);
      return v;
    };
    for (int d = 0; d < kDepths; d++) row("1 call a builtin (loop + call, the floor)", depths[d], t[NOP][d]);
    row("  GIL released and retaken (Save/Restore)", 0, net(RELEASE, 0));
    row("2 op, lines off (release + op_frame_ids)", 0, net(OP_OFF, 0));
    row("5 PyGILState_Ensure + Release (GIL released)", 0, diff(GIL, RELEASE, 0));
    for (int d = 0; d < kDepths; d++) row("3 op, line (release + op_frame_ids)", depths[d], net(OP_LINE, d));
    for (int d = 0; d < kDepths; d++) row("  the line's price (op line - op lines off)", depths[d], diff(OP_LINE, OP_OFF, d));
    for (int d = 0; d < kDepths; d++) row("4 op, whole stack", depths[d], net(OP_STACK, d));
    for (int d = 0; d < kDepths; d++) row("6 frame_ids, line, GIL held", depths[d], net(WALK, d));
    for (int d = 0; d < kDepths; d++) row("6 frame_ids, whole stack, GIL held", depths[d], net(WALK_STACK, d));
    for (int d = 0; d < kDepths; d++)
      row("  frame_ids, line, frame objects made", depths[d], diff(WALK_TWICE, WALK, d));
    row("  a new line's text and intern (first time)", 0, first);
  }

  for (PyObject* f : fns) Py_XDECREF(f);
  Py_XDECREF(loop);
  Py_XDECREF(bench);
  Py_XDECREF(user);
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  long iters = argc > 1 ? strtol(argv[1], nullptr, 10) : 1000000;
  int reps = argc > 2 ? atoi(argv[2]) : 5;
  if (argc > 3 || iters < 1 || reps < 1) {
    fprintf(stderr, "usage: gmp_pyframes [ITERATIONS [REPETITIONS]]: both at least 1 (default 1000000 5)\n");
    return 2;
  }
  if (!write_fake_torch()) {
    remove_fake_torch();
    return 1;
  }
  gmp_py::bind(&g_host, &g_watching, nullptr);
  int rc = 1;
  if (PyImport_AppendInittab("_gmp_bench", init_module) == 0) {
    PyConfig config;
    PyConfig_InitIsolatedConfig(&config);
    config.write_bytecode = 0;  // nothing written next to the fake torch
    PyStatus st = Py_InitializeFromConfig(&config);
    PyConfig_Clear(&config);
    if (PyStatus_Exception(st)) {
      fprintf(stderr, "gmp_pyframes: Py_InitializeFromConfig: %s\n", st.err_msg ? st.err_msg : "?");
    } else {
      PyObject* sys_path = PySys_GetObject("path");  // borrowed
      PyObject* dir = PyUnicode_FromString(g_tmp.c_str());
      bool ok = py_ok(sys_path && dir && PyList_Insert(sys_path, 0, dir) == 0, "sys.path.insert");
      Py_XDECREF(dir);
      if (ok && !gmp_py::present()) fprintf(stderr, "gmp_pyframes: Python's symbols are not found through dlsym\n");
      else if (ok) rc = run(iters, reps);
      if (Py_FinalizeEx() != 0) rc = 1;
    }
  }
  remove_fake_torch();
  return rc;
}
