// profiler.unit.pybridge: the PyTorch bridge's Python side (profiler/torch/py.cpp)
// run for real on the CPU, in an embedded CPython, against a fake `torch`.
//
// The test writes a fake torch package into a temporary folder (module
// hooks, Module with _modules/_parameters/_buffers filled by __setattr__,
// Tensor with get_device/untyped_storage/nbytes), runs the user's program
// tests/profiler/pybridge_fake.py (argv[1]) and records every call py.cpp
// makes to a fake gmp_bridge_host. py.cpp reaches Python through
// dlsym(RTLD_DEFAULT): this executable links libpython, so the symbols are
// there, as they are in a python process.
//
// Run once per way of seeing module calls (argv[2]): "call", the C wrapper
// of Module.__call__ (the default), or "hooks", PyTorch's global module
// hooks (GMP_BRIDGE_WATCH_MODULE_HOOKS). Checked: the hooks go in once
// (always_call on the exit hook), and out and in again as the watch bits
// change (sync_hooks, an op); a module called inside one the hooks missed
// opens nothing (an orphan); the bridge hears each change of the innermost
// module (ModuleChanged, for its backward table); the
// exact sequence of module ranges and OWNER reports of a forward through a
// DistributedDataParallel-like wrapper, again without owners, then of the
// bare model; the frames ("FILE:LINE FUNCTION") seen from the user's code
// directly, through torch's and the standard library's code, and at an op
// with the GIL released; each text interned once; nothing on stdout.
#include <Python.h>  // first, as Python asks

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "check.h"
#include "gmemprof/trace_format.h"
#include "py.h"

namespace {

// ---- the fake host: every call, in order ------------------------------------

std::vector<std::string> g_log;    // ranges, owners, frames, in the order they came
std::vector<std::string> g_texts;  // intern: id - 1 -> text
std::map<std::string, int> g_interned;  // text -> intern calls
std::vector<std::string> g_lines;  // host->log
struct OwnerCall {
  const gmp_bridge_origin* o;
  unsigned action, device, flags;
  uint64_t address, bytes, requested, stream, pool, counter;
  uint32_t frame, stack;
};
std::vector<OwnerCall> g_blocks;

std::string text_of(uint32_t id) {
  if (id == 0) return "-";
  if (id > g_texts.size()) return "?" + std::to_string(id);
  return g_texts[id - 1];
}

void h_origin(gmp_bridge_origin* o) { memset(o, 0, sizeof *o); }
void h_block(const gmp_bridge_origin*, unsigned action, unsigned, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t,
             unsigned, uint64_t) {
  g_log.push_back("block " + std::to_string(action));  // py.cpp never calls it
}
void h_log(int debug, const char* line) { g_lines.push_back(std::to_string(debug) + " " + line); }
void h_op_begin(const char* name) { g_log.push_back(std::string("op_begin ") + name); }
void h_op_end() { g_log.push_back("op_end"); }
void h_optimizer_step(const char* name, int) { g_log.push_back(std::string("optimizer_step ") + name); }
void h_range_begin(unsigned kind, const char* name) {
  g_log.push_back((kind == GMT_RANGE_MODULE ? "module " : "range" + std::to_string(kind) + " ") + std::string(name));
}
void h_range_end() { g_log.push_back("end"); }
uint32_t h_intern(const char* s, size_t n) {
  std::string t(s, n);
  g_interned[t]++;
  for (size_t i = 0; i < g_texts.size(); i++)
    if (g_texts[i] == t) return static_cast<uint32_t>(i + 1);
  g_texts.push_back(t);
  return static_cast<uint32_t>(g_texts.size());
}
void h_block_at(const gmp_bridge_origin* o, unsigned action, unsigned device, uint64_t address, uint64_t bytes,
                uint64_t requested, uint64_t stream, uint64_t pool, unsigned flags, uint64_t counter, uint32_t frame,
                uint32_t stack) {
  g_blocks.push_back(OwnerCall{o, action, device, flags, address, bytes, requested, stream, pool, counter, frame,
                               stack});
  char line[200];
  snprintf(line, sizeof line, "owner %s dev=%u 0x%llx %llu %s", text_of(frame).c_str(), device,
           static_cast<unsigned long long>(address), static_cast<unsigned long long>(bytes),
           flags == GMT_BLKF_PARAMETER ? "P" : flags == GMT_BLKF_BUFFER ? "B" : "?");
  g_log.push_back(action == GMT_BLK_OWNER ? line : "block_at " + std::to_string(action));
}

const gmp_bridge_host kHost = {GMP_BRIDGE_ABI,  sizeof(gmp_bridge_host), h_origin,      h_block,
                               h_log,           h_op_begin,              h_op_end,      h_optimizer_step,
                               h_range_begin,   h_range_end,             h_intern,      h_block_at};
std::atomic<const gmp_bridge_host*> g_host{&kHost};
std::atomic<unsigned> g_watching;
unsigned g_way;  // 0: the __call__ wrapper, or GMP_BRIDGE_WATCH_MODULE_HOOKS

// ModuleChanged: the innermost module's path after each change, "-" none,
// "reset" when a thread's modules were dropped
std::vector<std::string> g_changes;
void on_changed(const void* innermost, bool reset) {
  g_changes.push_back(reset ? "reset" : innermost ? gmp_py::module_path(innermost) : "-");
}

// ---- _gmp_test: builtins the program calls ---------------------------------

// frame(*any): frame_ids without the stack, as an allocation under the GIL
PyObject* t_frame(PyObject*, PyObject*) {
  uint32_t f = 1, w = 1;
  gmp_py::frame_ids(false, &f, &w);
  CHECK(w == 0, " no stack asked, got %u", w);
  g_log.push_back("frame " + text_of(f));
  return PyLong_FromUnsignedLong(f);
}

// stack(): frame_ids with the whole stack
PyObject* t_stack(PyObject*, PyObject*) {
  uint32_t f = 0, w = 0;
  gmp_py::frame_ids(true, &f, &w);
  g_log.push_back("stack " + text_of(f) + " | " + text_of(w));
  Py_RETURN_NONE;
}

// op(): an op's start as bridge.cpp's forward_start sees it: PyTorch's
// binding has released the GIL; op_frame_ids takes it back for the walk
PyObject* t_op(PyObject*, PyObject*) {
  uint32_t f = 0, w = 0;
  CHECK(gmp_py::holds_gil());
  PyThreadState* ts = PyEval_SaveThread();
  CHECK(!gmp_py::holds_gil());
  gmp_py::op_frame_ids(true, false, &f, &w);
  CHECK(!gmp_py::holds_gil(), "op_frame_ids gave the GIL back");
  PyEval_RestoreThread(ts);
  CHECK(w == 0);
  g_log.push_back("op " + text_of(f));
  Py_RETURN_NONE;
}

PyMethodDef kMethods[] = {{"frame", t_frame, METH_VARARGS, nullptr},
                          {"stack", t_stack, METH_NOARGS, nullptr},
                          {"op", t_op, METH_NOARGS, nullptr},
                          {nullptr, nullptr, 0, nullptr}};
PyModuleDef kTestModule = {PyModuleDef_HEAD_INIT, "_gmp_test", nullptr, -1, kMethods, nullptr, nullptr, nullptr, nullptr};
PyObject* init_module() { return PyModule_Create(&kTestModule); }

// ---- the fake torch ---------------------------------------------------------

const char kTorchInit[] = R"(# fake torch (profiler.unit.pybridge)
from . import nn
from .nn.modules.module import Storage, Tensor


def probe(fn):
    # torch's own code calling back: its frame is not the program's
    return fn()
)";

// torch.compiler.is_compiling(), which the test turns on and off
const char kCompiler[] = R"(
compiling = [False]


def is_compiling():
    return compiling[0]
)";

const char kNnInit[] = "from .modules import Module, ModuleList, Parameter\n";
const char kModulesInit[] = "from .module import Module, ModuleList, Parameter\n";

// torch/nn/modules/module.py's global hooks and Module.__call__, reduced to
// what the bridge relies on
const char kModulePy[] = R"(
_global_forward_pre_hooks = {}
_global_forward_hooks = {}
_global_forward_hooks_always_called = {}
_next_id = [0]


class RemovableHandle:
    def __init__(self, *dicts):
        _next_id[0] += 1
        self.id = _next_id[0]
        self.dicts = dicts

    def remove(self):
        for d in self.dicts:
            d.pop(self.id, None)


def register_module_forward_pre_hook(hook):
    h = RemovableHandle(_global_forward_pre_hooks)
    _global_forward_pre_hooks[h.id] = hook
    return h


def register_module_forward_hook(hook, *, always_call=False):
    h = RemovableHandle(_global_forward_hooks, _global_forward_hooks_always_called)
    _global_forward_hooks[h.id] = hook
    if always_call:
        _global_forward_hooks_always_called[h.id] = True
    return h


class Storage:
    def __init__(self, ptr):
        self._ptr = ptr

    def data_ptr(self):
        return self._ptr


class Tensor:
    def __init__(self, device, storage, nbytes):
        self._device = device
        self._storage = storage
        self.nbytes = nbytes

    def get_device(self):
        return self._device

    def untyped_storage(self):
        # a new object at each call, as torch's
        return Storage(self._storage.data_ptr())


class Parameter(Tensor):
    pass


class Module:
    def __init__(self):
        super().__setattr__("_parameters", {})
        super().__setattr__("_buffers", {})
        super().__setattr__("_modules", {})

    def register_parameter(self, name, param):
        self._parameters[name] = param

    def register_buffer(self, name, tensor):
        self._buffers[name] = tensor

    def __setattr__(self, name, value):
        if isinstance(value, Parameter):
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._modules[name] = value
        elif name in self._buffers:
            self._buffers[name] = value
        else:
            super().__setattr__(name, value)

    def __getattr__(self, name):
        for d in ("_parameters", "_buffers", "_modules"):
            held = self.__dict__.get(d)
            if held is not None and name in held:
                return held[name]
        raise AttributeError(name)

    def _call_impl(self, *args):
        if not (_global_forward_pre_hooks or _global_forward_hooks):
            return self.forward(*args)  # the fast path: no hook runs

        def inner():  # as in PyTorch 2: the hooks run in a closure
            nonlocal args
            for hook in list(_global_forward_pre_hooks.values()):
                r = hook(self, args)
                if r is not None:
                    args = r if isinstance(r, tuple) else (r,)
            try:
                result = self.forward(*args)
            except BaseException:
                for k, hook in list(_global_forward_hooks.items()):
                    if _global_forward_hooks_always_called.get(k):
                        hook(self, args, None)
                raise
            for hook in list(_global_forward_hooks.values()):
                r = hook(self, args, result)
                if r is not None:
                    result = r
            return result

        return inner()

    def _wrapped_call_impl(self, *args):
        return self._call_impl(*args)

    __call__ = _wrapped_call_impl


class Call(Module):
    # torch's code calling back from inside a module
    def forward(self, fn):
        return fn()


class ModuleList(Module):
    def __init__(self, modules):
        super().__init__()
        for i, m in enumerate(modules):
            self._modules[str(i)] = m

    def __iter__(self):
        return iter(self._modules.values())
)";

std::string g_tmp;
std::vector<std::string> g_made;  // created files and folders, in order

void put(const std::string& rel, const char* text) {
  std::string p = g_tmp + "/" + rel;
  FILE* f = fopen(p.c_str(), "w");
  REQUIRE(f, "cannot write %s", p.c_str());
  REQUIRE(fputs(text, f) >= 0 && fclose(f) == 0, "cannot write %s", p.c_str());
  g_made.push_back(p);
}

void mkdir_in(const std::string& rel) {
  std::string p = g_tmp + "/" + rel;
  REQUIRE(mkdir(p.c_str(), 0700) == 0, "mkdir %s", p.c_str());
  g_made.push_back(p);
}

void write_fake_torch() {
  const char* base = getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/gmp_pybridge_XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back(0);
  REQUIRE(mkdtemp(buf.data()), "mkdtemp %s", tmpl.c_str());
  g_tmp = buf.data();
  mkdir_in("torch");
  mkdir_in("torch/nn");
  mkdir_in("torch/nn/modules");
  mkdir_in("torch/compiler");
  put("torch/__init__.py", kTorchInit);
  put("torch/nn/__init__.py", kNnInit);
  put("torch/nn/modules/__init__.py", kModulesInit);
  put("torch/nn/modules/module.py", kModulePy);
  put("torch/compiler/__init__.py", kCompiler);
}

void remove_fake_torch() {
  for (size_t i = g_made.size(); i > 0; i--) remove(g_made[i - 1].c_str());
  rmdir(g_tmp.c_str());
}

// ---- helpers ----------------------------------------------------------------

std::string g_script;  // the program's path, as its frames name it
std::string g_source;

// The line marked "# at: name" in the program.
int line_of(const char* name) {
  std::istringstream in(g_source);
  std::string l, mark = std::string("# at: ") + name;
  for (int n = 1; std::getline(in, l); n++)
    if (l.size() >= mark.size() && l.compare(l.size() - mark.size(), mark.size(), mark) == 0) return n;
  REQUIRE(false, "no line marked '%s' in %s", mark.c_str(), g_script.c_str());
  return 0;
}

std::string at(const char* mark, const char* function) {
  return g_script + ":" + std::to_string(line_of(mark)) + " " + function;
}

// Python's error, printed to stderr, as a failed check.
void py_ok(bool ok, const char* what) {
  if (ok) return;
  if (PyErr_Occurred()) PyErr_Print();
  REQUIRE(false, "%s failed", what);
}

long eval_long(PyObject* globals, const char* expr) {
  PyObject* r = PyRun_String(expr, Py_eval_input, globals, globals);
  py_ok(r != nullptr, expr);
  long v = PyLong_AsLong(r);
  Py_DECREF(r);
  py_ok(!(v == -1 && PyErr_Occurred()), expr);
  return v;
}

// got against want, item by item (a missing one is "(none)"); got is
// emptied for the next check
void check_seq(std::vector<std::string>* got, const std::vector<std::string>& want, const char* noun,
               const char* what) {
  tc_context("%s", what);
  size_t n = want.size() > got->size() ? want.size() : got->size();
  for (size_t i = 0; i < n; i++) {
    const char* g = i < got->size() ? (*got)[i].c_str() : "(none)";
    const char* e = i < want.size() ? want[i].c_str() : "(none)";
    CHECK(strcmp(g, e) == 0, " %s %zu\n  got      '%s'\n  expected '%s'", noun, i, g, e);
  }
  tc_context(nullptr);
  got->clear();
}

void check_log(const std::vector<std::string>& want, const char* what) { check_seq(&g_log, want, "event", what); }

// Whether module calls are followed now, as the way under test does it:
// the wrapper in Module.__call__ and no global hook, or the three hooks.
void check_in(PyObject* globals, bool in, const char* what) {
  tc_context("%s", what);
  long wrapped = eval_long(globals,
                           "int(torch.nn.modules.module.Module.__call__ is not "
                           "torch.nn.modules.module.Module._wrapped_call_impl)");
  long pre = eval_long(globals, "len(torch.nn.modules.module._global_forward_pre_hooks)");
  long post = eval_long(globals, "len(torch.nn.modules.module._global_forward_hooks)");
  long always = eval_long(globals, "len(torch.nn.modules.module._global_forward_hooks_always_called)");
  bool hooks = g_way != 0;
  CHECK_EQ_U64(wrapped, in && !hooks ? 1 : 0);
  CHECK_EQ_U64(pre, in && hooks ? 1 : 0);
  CHECK_EQ_U64(post, in && hooks ? 1 : 0);
  CHECK_EQ_U64(always, in && hooks ? 1 : 0);
  tc_context(nullptr);
}

void check_changes(const std::vector<std::string>& want, const char* what) {
  check_seq(&g_changes, want, "change", what);
}

// step(model): one forward (plus the stack probe before it)
void step(PyObject* prog, PyObject* model) {
  PyObject* r = PyObject_CallMethod(prog, "step", "O", model);
  py_ok(r != nullptr, "step(model)");
  Py_DECREF(r);
}

}  // namespace

int main(int argc, char** argv) {
  REQUIRE(argc == 3 && (strcmp(argv[2], "call") == 0 || strcmp(argv[2], "hooks") == 0),
          "usage: test_pybridge PROGRAM.py call|hooks");
  g_script = argv[1];
  g_way = strcmp(argv[2], "hooks") == 0 ? GMP_BRIDGE_WATCH_MODULE_HOOKS : 0;
  const unsigned kModules = GMP_BRIDGE_WATCH_MODULES | GMP_BRIDGE_WATCH_FRAMES | g_way;
  g_watching.store(kModules);
  {
    std::ifstream in(g_script);
    REQUIRE(in, "cannot read %s", g_script.c_str());
    std::ostringstream s;
    s << in.rdbuf();
    g_source = s.str();
  }

  // py.cpp never writes stdout: fd 1 goes to a file, checked empty at the end
  fflush(stdout);
  int saved_out = dup(1);
  FILE* out = tmpfile();
  REQUIRE(saved_out >= 0 && out && dup2(fileno(out), 1) == 1, "cannot redirect stdout");

  write_fake_torch();

  // what bridge.cpp does at load: bind; and at attach: present()
  gmp_py::bind(&g_host, &g_watching, on_changed);
  CHECK(!gmp_py::holds_gil(), "no interpreter yet");

  REQUIRE(PyImport_AppendInittab("_gmp_test", init_module) == 0);
  PyConfig config;
  PyConfig_InitIsolatedConfig(&config);
  config.write_bytecode = 0;  // nothing written next to the sources
  PyStatus st = Py_InitializeFromConfig(&config);
  PyConfig_Clear(&config);
  REQUIRE(!PyStatus_Exception(st), "Py_InitializeFromConfig: %s", st.err_msg ? st.err_msg : "?");

  CHECK(gmp_py::present(), "Python's symbols are found through dlsym(RTLD_DEFAULT)");
  CHECK(gmp_py::holds_gil());

  // the fake torch first on sys.path, then the program, compiled under its
  // own path (its frames' FILE)
  PyObject* sys_path = PySys_GetObject("path");  // borrowed
  PyObject* dir = PyUnicode_FromString(g_tmp.c_str());
  py_ok(sys_path && dir && PyList_Insert(sys_path, 0, dir) == 0, "sys.path.insert");
  Py_DECREF(dir);
  PyObject* code = Py_CompileString(g_source.c_str(), g_script.c_str(), Py_file_input);
  py_ok(code != nullptr, "compile the program");
  PyObject* prog = PyImport_ExecCodeModuleEx("pybridge_fake", code, g_script.c_str());
  py_ok(prog != nullptr, "run the program");
  Py_DECREF(code);
  PyObject* globals = PyModule_GetDict(prog);  // borrowed

  // no frame at all (C++ with no Python frame): nothing, and before
  // setup() frame_ids does nothing either
  uint32_t f = 7, w = 7;
  gmp_py::frame_ids(true, &f, &w);
  CHECK(f == 0 && w == 0, "before setup: %u %u", f, w);

  // the first op: forward_start's op_frame_ids with the GIL released runs
  // setup(), which registers the hooks (no Python frame: no frame id)
  PyThreadState* ts = PyEval_SaveThread();
  gmp_py::op_frame_ids(true, false, &f, &w);
  PyEval_RestoreThread(ts);
  CHECK(f == 0 && w == 0, "no Python frame: %u %u", f, w);
  // once only, however often asked
  gmp_py::setup();
  ts = PyEval_SaveThread();
  gmp_py::op_frame_ids(false, false, &f, &w);
  PyEval_RestoreThread(ts);
  check_in(globals, true, "in at the first op");
  if (!g_way)
    CHECK_EQ_U64(eval_long(globals, "int(torch.nn.modules.module.Module.__call__.__module__ == 'gmemprof')"), 1);
  CHECK(g_log.empty() && g_texts.empty(), "setup made %zu events, %zu texts", g_log.size(), g_texts.size());

  // only torch's code on the stack: no frame of the program's own
  PyObject* probe = PyObject_GetAttrString(PyDict_GetItemString(globals, "torch"), "probe");
  PyObject* frame_fn = PyDict_GetItemString(PyModule_GetDict(PyDict_GetItemString(globals, "_gmp_test")), "frame");
  py_ok(probe && frame_fn, "torch.probe, _gmp_test.frame");
  PyObject* r = PyObject_CallOneArg(probe, frame_fn);
  py_ok(r != nullptr, "torch.probe(_gmp_test.frame) from C");
  Py_DECREF(r);
  Py_DECREF(probe);
  check_log({"frame -"}, "only torch's frames");

  PyObject* made = PyObject_CallMethod(prog, "make", nullptr);
  py_ok(made && PyTuple_Check(made) && PyTuple_Size(made) == 2, "make()");
  PyObject* ddp = PyTuple_GetItem(made, 0);  // borrowed
  PyObject* net = PyTuple_GetItem(made, 1);
  CHECK(g_log.empty(), "building the model calls no hook");

  const std::string stack = "stack " + at("stack_inner", "where") + " | " + at("stack_inner", "where") + "\n" +
                            at("stack_outer", "step");
  // the frames of Net.forward's end, whatever code sits between
  const std::vector<std::string> frames = {"frame " + at("direct", "Net.forward"),
                                           "frame " + at("through_torch", "Net.forward"),
                                           "frame " + at("through_stdlib", "Net.forward"),
                                           "op " + at("op", "Net.forward")};

  // First forward, through the wrapper. The wrapper is the outermost module:
  // a range of its class; its `module` starts a root of its own class, Net.
  // Each module reports its own tensors at its pre-hook, before its range:
  //   Net: parameters cpu_scale (device -1: none), alias_a = alias_b (one
  //     tensor: 32 bytes once), shared_x + shared_y (one storage 0x600000:
  //     100 + 28 = 128); buffers running_mean (0x300000, 128), unused
  //     (None: none), mask (0x600000 again but a buffer: 8 bytes apart)
  //   fc1: weight 0x100000 4096 and bias 0x200000 64, distinct storages
  //   blocks: never called (a container); blocks.0 and blocks.1 found two
  //     levels down; each Lin's bias is None
  //   blocks.1.lin: a CheckpointWrapper, no tensors of its own; its
  //     _checkpoint_wrapped_module opens no range and reports its weight
  //     (device 1, 0x800000, 512) under the wrapper's path
  //   embed and head: one tied weight 0x400000 1024, reported by both
  //   boom raises: the exit hook (always_call) still closes its range
  std::vector<std::string> first = {
      stack,
      "module DistributedDataParallel",
      "owner Net dev=0 0x500000 32 P",
      "owner Net dev=0 0x600000 128 P",
      "owner Net dev=0 0x300000 128 B",
      "owner Net dev=0 0x600000 8 B",
      "module Net",
      "owner Net.fc1 dev=0 0x100000 4096 P",
      "owner Net.fc1 dev=0 0x200000 64 P",
      "module Net.fc1",
      "end",
      "module Net.blocks.0",
      "owner Net.blocks.0.lin dev=0 0x700000 256 P",
      "module Net.blocks.0.lin",
      "end",
      "end",
      "module Net.blocks.1",
      "module Net.blocks.1.lin",
      "owner Net.blocks.1.lin dev=1 0x800000 512 P",
      "end",
      "end",
      "owner Net.embed dev=0 0x400000 1024 P",
      "module Net.embed",
      "end",
      "owner Net.head dev=0 0x400000 1024 P",
      "module Net.head",
      "end",
      "module Net.boom",
      "end",
  };
  first.insert(first.end(), frames.begin(), frames.end());
  first.insert(first.end(), {"end", "end"});
  step(prog, ddp);
  check_log(first, "first forward through the wrapper");

  // every OWNER call: no origin (now, this thread), nothing but the fields
  // above, the path's id in `frame`, no stack
  // Net 4, fc1 2, blocks.0.lin, blocks.1.lin, embed and head 1 each
  CHECK_EQ_U64(g_blocks.size(), 10);
  for (const OwnerCall& b : g_blocks) {
    CHECK(b.o == nullptr && b.action == GMT_BLK_OWNER && b.requested == 0 && b.stream == 0 && b.pool == 0 &&
              b.counter == 0 && b.stack == 0 && b.frame != 0,
          " OWNER at 0x%llx", static_cast<unsigned long long>(b.address));
    CHECK(b.address != 0x900000, "the CPU parameter is reported");
  }
  size_t texts = g_texts.size();

  // Second forward: the same ranges and frames, no owners, nothing interned
  std::vector<std::string> again;
  for (const std::string& e : first)
    if (e.compare(0, 6, "owner ") != 0) again.push_back(e);
  step(prog, ddp);
  check_log(again, "second forward through the wrapper");
  CHECK_EQ_U64(g_blocks.size(), 10);
  CHECK_EQ_U64(g_texts.size(), texts);

  // The bare model: Net is now the outermost module, a placement of its own
  // (parent none instead of the wrapper), so Net's tensors are reported once
  // more, under the same path id; its children keep their placements under
  // the same Net node: no owners
  std::vector<std::string> bare = {stack,
                                   "owner Net dev=0 0x500000 32 P",
                                   "owner Net dev=0 0x600000 128 P",
                                   "owner Net dev=0 0x300000 128 B",
                                   "owner Net dev=0 0x600000 8 B"};
  for (size_t i = 2; i + 1 < again.size(); i++) bare.push_back(again[i]);  // without the wrapper's range
  step(prog, net);
  check_log(bare, "the bare model");
  CHECK_EQ_U64(g_blocks.size(), 14);
  CHECK_EQ_U64(g_texts.size(), texts);

  // A module that dies is forgotten: a new one (whatever its address) is a
  // new placement and reports its tensors; the root's path is its class
  g_changes.clear();
  for (int i = 0; i < 2; i++) {
    PyObject* fr = PyObject_CallMethod(prog, "fresh", nullptr);
    py_ok(fr != nullptr, "fresh()");
    Py_DECREF(fr);
    check_log({"owner Lin dev=0 0xa00000 48 P", "module Lin", "end"}, i ? "a second fresh module" : "a fresh module");
    check_changes({"Lin", "-"}, "a fresh module's call");
  }
  CHECK_EQ_U64(g_blocks.size(), 16);
  CHECK_EQ_U64(g_texts.size(), texts + 1);

  // Modules not watched: the hooks return at once; frames go on
  g_watching.store(GMP_BRIDGE_WATCH_FRAMES | g_way);
  std::vector<std::string> unwatched = {stack};
  unwatched.insert(unwatched.end(), frames.begin(), frames.end());
  step(prog, ddp);
  check_log(unwatched, "modules not watched");
  g_watching.store(kModules);

  // ... and the op in that forward took the hooks out: outside a window
  // Module.__call__ keeps its fast path
  check_in(globals, false, "out at an op outside a window");
  g_changes.clear();

  // Modules watched again while a forward runs: the op inside Late.forward
  // puts the hooks in, so Late had no pre-hook. Its child Block looks like a
  // root but has Late's _call_impl outside it: it and its Lin are orphans,
  // with no range and no owner. The next call is whole.
  PyObject* late = PyObject_CallMethod(prog, "late", nullptr);
  py_ok(late != nullptr, "late()");
  PyObject* zero = PyLong_FromLong(0);
  PyObject* lr = PyObject_CallOneArg(late, zero);
  py_ok(lr != nullptr, "Late()(0), the hooks out");
  Py_DECREF(lr);
  const std::string late_op = "op " + at("late_op", "Late.forward");
  check_log({late_op}, "the hooks come in inside a forward");
  check_changes({"reset"}, "orphans change nothing; the thread's old modules are dropped");
  check_in(globals, true, "in at the op inside Late.forward");
  lr = PyObject_CallOneArg(late, zero);
  py_ok(lr != nullptr, "Late()(0), the hooks in");
  Py_DECREF(lr);
  check_log({"module Late", late_op, "module Late.inner", "owner Late.inner.lin dev=0 0xb00000 96 P",
             "module Late.inner.lin", "end", "end", "end"},
            "the next call of that model");
  check_changes({"Late", "Late.inner", "Late.inner.lin", "Late.inner", "Late", "-"}, "the next call's changes");
  Py_DECREF(zero);
  Py_DECREF(late);
  CHECK_EQ_U64(g_blocks.size(), 17);

  // torch.compile: while dynamo traces, torch.compiler.is_compiling() is
  // true and the wrapper only calls through (dynamo then traces the module
  // as it does unprofiled); the global hooks know nothing of it
  PyObject* ir = PyRun_String("import torch.compiler", Py_file_input, globals, globals);
  py_ok(ir != nullptr, "import torch.compiler");
  Py_DECREF(ir);
  const std::vector<std::string> lin = {"owner Lin dev=0 0xa00000 48 P", "module Lin", "end"};
  for (int compiling = 1; compiling >= 0; compiling--) {
    PyObject* cr = PyRun_String(compiling ? "torch.compiler.compiling[0] = True" : "torch.compiler.compiling[0] = False",
                                Py_file_input, globals, globals);
    py_ok(cr != nullptr, "torch.compiler.compiling");
    Py_DECREF(cr);
    PyObject* fr = PyObject_CallMethod(prog, "fresh", nullptr);
    py_ok(fr != nullptr, "fresh()");
    Py_DECREF(fr);
    bool seen = !compiling || g_way;
    check_log(seen ? lin : std::vector<std::string>{}, compiling ? "a call while compiling" : "a call after compiling");
    check_changes(seen ? std::vector<std::string>{"Lin", "-"} : std::vector<std::string>{},
                  compiling ? "a call while compiling" : "a call after compiling");
  }
  CHECK_EQ_U64(g_blocks.size(), g_way ? 19 : 18);
  if (!g_way) {
    // dynamo inlines the wrapper as user code and looks its names up in
    // __globals__["__builtins__"] (a dict or a module), as CPython does
    PyObject* br = PyRun_String(
        "_b = torch.nn.Module.__call__.__globals__['__builtins__']\n"
        "assert (_b if isinstance(_b, dict) else _b.__dict__)['len'] is len, _b\n",
        Py_file_input, globals, globals);
    py_ok(br != nullptr, "the wrapper's globals hold __builtins__, as dynamo's inliner reads them");
    Py_DECREF(br);
  }

  // a whole stack taken inside a module call holds the program's and
  // torch's frames, never the wrapper's own
  PyObject* sr = PyRun_String(
      "class StackProbe(torch.nn.Module):\n"
      "    def forward(self, x):\n"
      "        return _gmp_test.stack()\n"
      "StackProbe()(0)\n",
      Py_file_input, globals, globals);
  py_ok(sr != nullptr, "StackProbe()(0)");
  Py_DECREF(sr);
  REQUIRE(g_log.size() == 3, "StackProbe: %zu events", g_log.size());
  CHECK(g_log[0] == "module StackProbe" && g_log[2] == "end", " StackProbe's range: '%s' '%s'", g_log[0].c_str(),
        g_log[2].c_str());
  CHECK(g_log[1].find("StackProbe.forward") != std::string::npos && g_log[1].find("_wrapped_call_impl") != std::string::npos &&
            g_log[1].find("<gmemprof>") == std::string::npos,
        " the stack inside a module: %s", g_log[1].c_str());
  g_log.clear();
  g_changes.clear();

  // a frame taken in torch's code inside a module called from C: no frame
  // of the program's own (the wrapper's is not one)
  PyObject* call = PyRun_String("torch.nn.modules.module.Call()", Py_eval_input, globals, globals);
  py_ok(call != nullptr, "Call()");
  PyObject* cr = PyObject_CallOneArg(call, frame_fn);
  py_ok(cr != nullptr, "Call()(_gmp_test.frame)");
  Py_DECREF(cr);
  Py_DECREF(call);
  check_log({"module Call", "frame -", "end"}, "a frame inside torch's module");
  g_changes.clear();

  // sync_hooks (an optimizer step's end) follows the watch bits
  g_watching.store(GMP_BRIDGE_WATCH_FRAMES | g_way);
  gmp_py::sync_hooks();
  check_in(globals, false, "out at sync_hooks");
  gmp_py::sync_hooks();  // nothing to do
  g_watching.store(kModules);
  ts = PyEval_SaveThread();  // as at an op's end: the GIL released
  gmp_py::sync_hooks();
  PyEval_RestoreThread(ts);
  check_in(globals, true, "in at sync_hooks");
  CHECK(g_log.empty(), "sync_hooks made %zu events", g_log.size());

  // A library saves Module.__call__ (the wrapper) and puts its own, which
  // calls the one it saved. At the next window the wrapper is not torch's
  // __call__ nor in place, so the global hooks serve, and a call that both
  // see opens one range. When the library puts the wrapper back, it is in
  // again, without the hooks.
  if (!g_way) {
    PyObject* lr2 = PyRun_String(
        "import torch.nn.modules.module as _m\n"
        "_saved = _m.Module.__call__\n"
        "def _lib_call(self, *a, **k):\n"
        "    return _saved(self, *a, **k)\n"
        "_m.Module.__call__ = _lib_call\n",
        Py_file_input, globals, globals);
    py_ok(lr2 != nullptr, "a library's __call__");
    Py_DECREF(lr2);
    for (int round = 0; round < 2; round++) {
      g_watching.store(GMP_BRIDGE_WATCH_FRAMES | g_way);
      gmp_py::sync_hooks();
      g_watching.store(kModules);
      gmp_py::sync_hooks();
      CHECK_EQ_U64(eval_long(globals, "len(torch.nn.modules.module._global_forward_pre_hooks)"), round ? 0 : 1);
      PyObject* fr = PyObject_CallMethod(prog, "fresh", nullptr);
      py_ok(fr != nullptr, "fresh()");
      Py_DECREF(fr);
      check_log(lin, round ? "the wrapper put back" : "a call seen by the library's wrapper and the hooks");
      // the window's start dropped the thread's modules: a reset first
      check_changes({"reset", "Lin", "-"}, round ? "the wrapper put back" : "a call seen twice");
      if (!round) {
        PyObject* back = PyRun_String("_m.Module.__call__ = _saved\n", Py_file_input, globals, globals);
        py_ok(back != nullptr, "the library puts the wrapper back");
        Py_DECREF(back);
      }
    }
    check_in(globals, true, "the wrapper in again");
  }

  // every text (paths, frames, stacks) interned exactly once: py.cpp caches
  // the ids; the path texts are the modules' paths
  for (const auto& t : g_interned) CHECK(t.second == 1, " '%s' interned %d times", t.first.c_str(), t.second);
  for (const char* p :
       {"Net", "Net.fc1", "Net.blocks.0.lin", "Net.blocks.1.lin", "Net.embed", "Net.head", "Lin", "Late.inner.lin"})
    CHECK(g_interned.count(p) == 1, " path '%s' not interned", p);
  // paths, where's frame, its stack, Net.forward's 4 lines, Late.forward's
  // op, StackProbe's frame and stack
  CHECK_EQ_U64(g_interned.size(), 8 + 1 + 1 + 4 + 1 + 2);

  // one debug line, once: the library's __call__ in place of torch's
  if (!g_way) {
    REQUIRE(g_lines.size() == 1, "host->log: %zu lines", g_lines.size());
    CHECK_HAS(g_lines[0].c_str(), "1 torch.nn.Module.__call__ is pybridge_fake._lib_call, not torch's: module calls are "
                                  "followed through PyTorch's global module hooks");
  } else {
    CHECK(g_lines.empty(), "host->log: %s", g_lines.empty() ? "" : g_lines[0].c_str());
  }

  Py_DECREF(made);
  Py_DECREF(prog);
  CHECK(Py_FinalizeEx() == 0, "Py_FinalizeEx");

  fflush(stdout);
  long written = lseek(1, 0, SEEK_END);
  dup2(saved_out, 1);
  close(saved_out);
  fclose(out);
  CHECK(written == 0, "%ld bytes written to stdout", written);

  remove_fake_torch();
  return tc_result(g_way ? "profiler.unit.pybridge_hooks" : "profiler.unit.pybridge");
}
