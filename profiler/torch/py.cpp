// nn.Module ranges and source frames for the PyTorch bridge (py.h).
//
// Module ranges come from a small Python function put in place of
// torch.nn.Module.__call__ while modules are watched, which calls C
// functions at each module call's start and end (see make_wrapper); where
// another library replaced __call__, or the watch bits ask, PyTorch's
// global forward pre-hook and forward hook (always_call=True) serve
// instead, as C functions. No line of the program changes, and every
// module call of every model is seen, wherever the model was made. A
// module's path is its root's class name, then the attribute names from
// parent to child, each found once in the parent's _modules and cached per
// (parent path, module object); a module object reused under another
// parent gets each of its paths.
//
// Wrappers are named as a user writes the model: the attribute that
// holds the wrapped module is dropped (DistributedDataParallel's and
// DataParallel's `module`, FSDP's `_fsdp_wrapped_module`, activation
// checkpointing's `_checkpoint_wrapped_module`, torch.compile's
// `_orig_mod`): under a parent the wrapped module takes the wrapper's
// path and opens no range of its own; as the outermost module, the
// wrapped module starts a root of its own class name.
//
// The wrapper (or the hooks; "the hooks" below means either) is in only
// while modules are watched: outside the schedule's windows
// Module.__call__ is torch's own. It goes in at the first op or at the
// optimizer step that opens a window (sync_hooks), and out at the step
// after the window. A module whose call began before the hooks were in was
// not seen: its children would look like roots. A root whose Python stack
// holds another Module._call_impl frame is such a child, and it and its
// subtree open no range (an orphan) until the outer call returns.
//
// At a module's first call under a path while modules are watched, its own
// parameters and buffers are reported as OWNER block events under that
// path (report_owners): they were made before any module ran.
//
// Python's C API is reached through dlsym: no Python header, no link to
// libpython. Every cache here is touched under the GIL only.
#include "py.h"

#include <dlfcn.h>

#include <cstring>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gmemprof/trace_format.h"

namespace gmp_py {
namespace {

constexpr int kMaxFrames = 512;  // a walk of the stack goes no deeper

struct PyObj;  // opaque
using O = PyObj*;
using ssize = long;  // Py_ssize_t on Linux

// PyMethodDef's layout (stable ABI)
struct MethodDef {
  const char* name;
  void* meth;
  int flags;
  const char* doc;
};
constexpr int kMethO = 0x0008;
constexpr int kMethFastcall = 0x0080;
constexpr int kFileInput = 257;  // Py_file_input

struct Api {
  int (*IsInitialized)();
  int (*GILState_Check)();
  O (*ImportModule)(const char*);
  O (*GetAttrString)(O, const char*);
  O (*Call)(O, O, O);
  O (*TupleNew)(ssize);
  int (*TupleSetItem)(O, ssize, O);
  O (*DictNew)();
  int (*DictSetItemString)(O, const char*, O);
  O (*DictGetItemString)(O, const char*);
  int (*DictNext)(O, ssize*, O*, O*);
  O (*BoolFromLong)(long);
  O (*CFunctionNewEx)(MethodDef*, O, O);
  void (*IncRef)(O);
  void (*DecRef)(O);
  void (*ErrFetch)(O*, O*, O*);
  void (*ErrRestore)(O, O, O);
  void (*ErrClear)();
  O (*ErrOccurred)();  // borrowed
  const char* (*AsUTF8)(O, ssize*);
  O (*WeakNewRef)(O, O);
  O (*LongFromVoidPtr)(void*);
  void* (*LongAsVoidPtr)(O);
  long long (*LongAsLongLong)(O);
  O (*GetFrame)();   // borrowed
  O (*FrameBack)(O);  // new reference
  O (*FrameCode)(O);  // new reference
  int (*FrameLine)(O);
  int (*FrameLasti)(O);  // 3.11+; null before
  void* (*ThisThreadState)();
  int (*Ensure)();
  void (*Release)(int);
  int (*Finalizing)();  // Py_IsFinalizing (3.13) or _Py_IsFinalizing
  // Module.__call__'s wrapper; without them the global hooks serve
  O (*CompileString)(const char*, const char*, int);
  O (*EvalCode)(O, O, O);
  int (*SetAttrString)(O, const char*, O);
  O None;
};
Api P;
std::atomic<int> g_api{0};  // 0 not looked up, 1 present, -1 absent

template <class F>
bool sym(F& f, const char* name) {
  f = reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
  return f != nullptr;
}

bool resolve() {
  int s = g_api.load(std::memory_order_acquire);
  if (s) return s > 0;
  bool ok = sym(P.IsInitialized, "Py_IsInitialized") && sym(P.GILState_Check, "PyGILState_Check") &&
            sym(P.ImportModule, "PyImport_ImportModule") && sym(P.GetAttrString, "PyObject_GetAttrString") &&
            sym(P.Call, "PyObject_Call") && sym(P.TupleNew, "PyTuple_New") &&
            sym(P.TupleSetItem, "PyTuple_SetItem") && sym(P.DictNew, "PyDict_New") &&
            sym(P.DictSetItemString, "PyDict_SetItemString") &&
            sym(P.DictGetItemString, "PyDict_GetItemString") && sym(P.DictNext, "PyDict_Next") &&
            sym(P.BoolFromLong, "PyBool_FromLong") && sym(P.CFunctionNewEx, "PyCFunction_NewEx") &&
            sym(P.IncRef, "Py_IncRef") && sym(P.DecRef, "Py_DecRef") && sym(P.ErrFetch, "PyErr_Fetch") &&
            sym(P.ErrRestore, "PyErr_Restore") && sym(P.ErrClear, "PyErr_Clear") &&
            sym(P.ErrOccurred, "PyErr_Occurred") &&
            sym(P.AsUTF8, "PyUnicode_AsUTF8AndSize") && sym(P.WeakNewRef, "PyWeakref_NewRef") &&
            sym(P.LongFromVoidPtr, "PyLong_FromVoidPtr") && sym(P.LongAsVoidPtr, "PyLong_AsVoidPtr") &&
            sym(P.LongAsLongLong, "PyLong_AsLongLong") &&
            sym(P.GetFrame, "PyEval_GetFrame") && sym(P.FrameBack, "PyFrame_GetBack") &&
            sym(P.FrameCode, "PyFrame_GetCode") && sym(P.FrameLine, "PyFrame_GetLineNumber") &&
            sym(P.None, "_Py_NoneStruct");
  ok = ok && sym(P.ThisThreadState, "PyGILState_GetThisThreadState") && sym(P.Ensure, "PyGILState_Ensure") &&
       sym(P.Release, "PyGILState_Release");
  if (!sym(P.Finalizing, "Py_IsFinalizing")) sym(P.Finalizing, "_Py_IsFinalizing");
  sym(P.FrameLasti, "PyFrame_GetLasti");
  if (!(sym(P.CompileString, "Py_CompileString") && sym(P.EvalCode, "PyEval_EvalCode") &&
        sym(P.SetAttrString, "PyObject_SetAttrString")))
    P.CompileString = nullptr;
  g_api.store(ok ? 1 : -1, std::memory_order_release);
  return ok;
}

std::atomic<const gmp_bridge_host*>* g_host;
std::atomic<unsigned>* g_watching;
ModuleChanged g_changed;

// Saves and restores the thread's pending exception around our own calls.
struct ErrGuard {
  O t = nullptr, v = nullptr, tb = nullptr;
  ErrGuard() { P.ErrFetch(&t, &v, &tb); }
  ~ErrGuard() {
    P.ErrClear();
    P.ErrRestore(t, v, tb);
  }
};

std::string utf8(O s) {
  ssize n = 0;
  const char* p = s ? P.AsUTF8(s, &n) : nullptr;
  if (!p) {
    P.ErrClear();
    return std::string();
  }
  return std::string(p, static_cast<size_t>(n));
}

std::string attr_str(O o, const char* name) {
  O a = P.GetAttrString(o, name);
  if (!a) {
    P.ErrClear();
    return std::string();
  }
  std::string s = utf8(a);
  P.DecRef(a);
  return s;
}

std::string class_name(O m) {
  O c = P.GetAttrString(m, "__class__");
  if (!c) {
    P.ErrClear();
    return "Module";
  }
  std::string s = attr_str(c, "__name__");
  P.DecRef(c);
  return s.empty() ? "Module" : s;
}

// ---- module paths -----------------------------------------------------------

struct Node {
  std::string path;
  std::string cls;  // the class of the module first seen at this path
  Node* parent;
  uint32_t path_id = 0;  // host->intern(path) once its owners are reported
};
std::map<std::pair<Node*, std::string>, Node*> g_nodes;  // (parent, attribute) -> node; roots: (null, class)

Node* node_of(Node* parent, const std::string& name, const std::string& cls) {
  auto key = std::make_pair(parent, name);
  auto it = g_nodes.find(key);
  if (it != g_nodes.end()) return it->second;
  Node* n = new Node{parent ? parent->path + "." + name : name, cls, parent};
  g_nodes.emplace(key, n);
  return n;
}

// What a module object is under one parent path.
struct Placement {
  Node* parent;
  Node* node;
  bool opens;  // false: a wrapper's inner module, which takes its parent's range
  bool reported = false;  // its parameters and buffers were reported (report_owners)
};
struct ModInfo {
  O weakref;  // with a callback that forgets the module
  std::vector<Placement> at;
};
std::unordered_map<O, ModInfo> g_mods;  // keyed by the module object's address while it lives

O forget(O self, O weakref) {
  O key = static_cast<O>(P.LongAsVoidPtr(self));
  auto it = g_mods.find(key);
  if (it != g_mods.end() && it->second.weakref == weakref) {
    g_mods.erase(it);
    P.DecRef(weakref);
  }
  P.IncRef(P.None);
  return P.None;
}
MethodDef g_forget_def = {"gmemprof_forget_module", reinterpret_cast<void*>(&forget), kMethO, nullptr};

// The attribute path of m under parent's _modules, depth first, a few
// levels down (a parent may call a grandchild directly); "" not found.
std::string find_child(O parent, O m, int depth) {
  O mods = P.GetAttrString(parent, "_modules");
  if (!mods) {
    P.ErrClear();
    return std::string();
  }
  std::string found;
  ssize pos = 0;
  O k, v;
  while (found.empty() && P.DictNext(mods, &pos, &k, &v))
    if (v == m) found = utf8(k);
  pos = 0;
  while (found.empty() && depth > 0 && P.DictNext(mods, &pos, &k, &v)) {
    if (v == P.None) continue;
    std::string sub = find_child(v, m, depth - 1);
    if (!sub.empty()) found = utf8(k) + "." + sub;
  }
  P.DecRef(mods);
  return found;
}

bool is_wrapper_attr(const std::string& parent_cls, const std::string& name) {
  return name == "_fsdp_wrapped_module" || name == "_orig_mod" || name == "_checkpoint_wrapped_module" ||
         (name == "module" && (parent_cls == "DistributedDataParallel" || parent_cls == "DataParallel"));
}

Placement place(O m, Node* parent, O parent_module) {
  ErrGuard eg;
  std::string cls = class_name(m);
  if (!parent) return Placement{nullptr, node_of(nullptr, cls, cls), true};
  std::string name = find_child(parent_module, m, 3);
  if (name.empty()) name = cls;  // called inside its parent, held elsewhere
  if (is_wrapper_attr(parent->cls, name))
    return parent->parent ? Placement{parent, parent, false} : Placement{parent, node_of(nullptr, cls, cls), true};
  return Placement{parent, node_of(parent, name, cls), true};
}

// m's placement under parent; *kept: the table's entry (nullptr for a
// module that is not weak-referenceable, placed again at each call).
Placement lookup(O m, Node* parent, O parent_module, Placement** kept) {
  *kept = nullptr;
  auto it = g_mods.find(m);
  if (it != g_mods.end())
    for (Placement& p : it->second.at)
      if (p.parent == parent) {
        *kept = &p;
        return p;
      }
  Placement p = place(m, parent, parent_module);
  if (it == g_mods.end()) {
    ErrGuard eg;
    O key = P.LongFromVoidPtr(m);
    O cb = key ? P.CFunctionNewEx(&g_forget_def, key, nullptr) : nullptr;
    O wr = cb ? P.WeakNewRef(m, cb) : nullptr;
    if (key) P.DecRef(key);
    if (cb) P.DecRef(cb);
    if (!wr) return p;
    it = g_mods.emplace(m, ModInfo{wr, {}}).first;
  }
  it->second.at.push_back(p);
  *kept = &it->second.at.back();
  return p;
}

// ---- owners -----------------------------------------------------------------
//
// A module's own parameters and buffers (its _parameters and _buffers, not
// its children's), one OWNER block event per storage and role: address =
// the storage's data pointer, bytes = the tensors' own bytes summed over
// that storage. Parameters are made under model.cuda(), before any module
// runs; the first forward is the first moment the module is seen under its
// path, so each placement reports once, at its first call while modules
// are watched.

// The integer a no-argument method of o returns (ok false: none).
long long call_int(O o, const char* method, bool* ok) {
  *ok = false;
  O f = P.GetAttrString(o, method);
  O args = f ? P.TupleNew(0) : nullptr;
  O r = args ? P.Call(f, args, nullptr) : nullptr;
  long long v = 0;
  if (r) {
    v = P.LongAsLongLong(r);
    *ok = !(v == -1 && P.ErrOccurred());
  }
  for (O x : {r, args, f})
    if (x) P.DecRef(x);
  P.ErrClear();
  return v;
}

struct Held {
  uint64_t storage;
  unsigned device;
  uint64_t bytes;
};

// The CUDA tensors of one dict of m (_parameters or _buffers), by storage.
std::vector<Held> held_in(O m, const char* dict) {
  std::vector<Held> out;
  O d = P.GetAttrString(m, dict);
  if (!d) {
    P.ErrClear();
    return out;
  }
  std::vector<O> seen;  // one tensor under two names counts once
  ssize pos = 0;
  O k, t;
  while (P.DictNext(d, &pos, &k, &t)) {
    bool again = false;
    for (O o : seen) again = again || o == t;
    if (t == P.None || again) continue;
    seen.push_back(t);
    bool ok = false;
    long long dev = call_int(t, "get_device", &ok);
    if (!ok || dev < 0) continue;  // not on a CUDA device
    O st = P.GetAttrString(t, "untyped_storage");
    O args = st ? P.TupleNew(0) : nullptr;
    O s = args ? P.Call(st, args, nullptr) : nullptr;
    ok = false;
    long long ptr = s ? call_int(s, "data_ptr", &ok) : 0;
    for (O x : {s, args, st})
      if (x) P.DecRef(x);
    O nb = ok && ptr ? P.GetAttrString(t, "nbytes") : nullptr;
    long long bytes = nb ? P.LongAsLongLong(nb) : -1;
    if (nb) P.DecRef(nb);
    P.ErrClear();
    if (!ok || !ptr || bytes < 0) continue;
    Held h{static_cast<uint64_t>(ptr), static_cast<unsigned>(dev), static_cast<uint64_t>(bytes)};
    bool merged = false;
    for (Held& o : out)
      if (o.storage == h.storage && o.device == h.device) {
        o.bytes += h.bytes;
        merged = true;
      }
    if (!merged) out.push_back(h);
  }
  P.DecRef(d);
  return out;
}

// Reports m's parameters and buffers under node's path.
void report_owners(const gmp_bridge_host* h, O m, Node* node) {
  ErrGuard eg;
  for (unsigned role : {GMT_BLKF_PARAMETER, GMT_BLKF_BUFFER}) {
    std::vector<Held> held = held_in(m, role == GMT_BLKF_PARAMETER ? "_parameters" : "_buffers");
    if (!held.empty() && !node->path_id) node->path_id = h->intern(node->path.data(), node->path.size());
    for (const Held& x : held)
      h->block_at(nullptr, GMT_BLK_OWNER, x.device, x.storage, x.bytes, 0, 0, 0, role, 0, node->path_id, 0);
  }
}

struct Level {
  O module;
  Node* node;  // nullptr: an orphan (a call inside a module the hooks missed)
  bool opened;
};
constexpr unsigned kDepth = 64;
thread_local Level tl_stack[kDepth];
thread_local unsigned tl_depth;
// Each time the hooks go out the stacks of every thread are void: a thread
// resets its own when it sees a new generation.
std::atomic<unsigned> g_hook_gen{0};
thread_local unsigned tl_gen;

// The innermost module that opened a range on this thread (nullptr: none).
const Node* innermost() {
  for (unsigned d = tl_depth; d > 0; d--)
    if (tl_stack[d - 1].node) return tl_stack[d - 1].node;
  return nullptr;
}

void stack_current() {
  unsigned g = g_hook_gen.load(std::memory_order_relaxed);
  if (tl_gen != g) {
    tl_gen = g;
    tl_depth = 0;
    if (g_changed) g_changed(nullptr, true);
  }
}

O g_call_impl;  // torch.nn.Module._call_impl's code (a reference), or null

bool g_wrapped;  // the wrapper is in, not the global hooks (under the GIL)

// Called as a root module's call begins: whether an outer
// Module._call_impl runs on this thread (a call the hooks missed). The
// global pre-hook runs inside the module's own _call_impl (PyTorch 2 in a
// closure there, older ones in it directly), so a second _call_impl frame
// out from it is an outer module's; the wrapper of Module.__call__ runs
// before the module's own, so any is. A walk of the stack once per root
// call.
bool inside_missed_call() {
  O f = g_call_impl ? P.GetFrame() : nullptr;
  if (!f) return false;
  const int outer = g_wrapped ? 1 : 2;
  P.IncRef(f);
  int calls = 0;
  for (int n = 0; f && n < kMaxFrames && calls < outer; n++) {
    O code = P.FrameCode(f);
    calls += code == g_call_impl;
    if (code) P.DecRef(code);
    O back = P.FrameBack(f);
    P.DecRef(f);
    f = back;
  }
  if (f) P.DecRef(f);
  return calls == outer;
}

O none() {
  P.IncRef(P.None);
  return P.None;
}

bool modules_watched() { return (g_watching->load(std::memory_order_relaxed) & GMP_BRIDGE_WATCH_MODULES) != 0; }

// m's call begins (under the GIL): its level goes on this thread's stack,
// its range opens. False: modules not watched or too deep, no level.
bool module_enter(O m) {
  const gmp_bridge_host* h = g_host->load(std::memory_order_acquire);
  if (!h || !modules_watched()) return false;
  stack_current();
  if (tl_depth >= kDepth) return false;
  // the same call seen twice (a library's __call__ that calls a wrapper it
  // saved, and the global hooks inside): one level; the first exit closes it
  if (tl_depth && tl_stack[tl_depth - 1].module == m) return false;
  const Level* up = tl_depth ? &tl_stack[tl_depth - 1] : nullptr;
  if (up ? !up->node : inside_missed_call()) {
    tl_stack[tl_depth++] = Level{m, nullptr, false};
    return true;
  }
  Placement* kept;
  Placement p = lookup(m, up ? up->node : nullptr, up ? up->module : nullptr, &kept);
  tl_stack[tl_depth++] = Level{m, p.node, p.opens};
  // once per kept placement (set before Python runs again); a wrapper's
  // inner module (opens false) reports under the wrapper's path, the name
  // the user sees
  if (kept && !kept->reported) {
    kept->reported = true;
    report_owners(h, m, p.node);
  }
  if (p.opens) h->range_begin(GMT_RANGE_MODULE, p.node->path.c_str());
  if (g_changed) g_changed(innermost(), false);
  return true;
}

// m's call ends, returned or raised: its level comes off, its range
// closes. Calls no Python (a raised exception stays pending).
void module_exit(O m) {
  stack_current();
  if (!tl_depth || tl_stack[tl_depth - 1].module != m) return;
  const Level& l = tl_stack[--tl_depth];
  const gmp_bridge_host* h = g_host->load(std::memory_order_acquire);
  if (l.opened && h) h->range_end();
  if (l.node && g_changed) g_changed(innermost(), false);
}

// forward pre-hook: hook(module, args)
O pre_hook(O, O const* args, ssize nargs) {
  if (nargs >= 1) module_enter(args[0]);
  return none();
}

// forward hook: hook(module, args, output); with always_call, also when
// the forward raised
O post_hook(O, O const* args, ssize nargs) {
  if (nargs >= 1) module_exit(args[0]);
  return none();
}

MethodDef g_pre_def = {"gmemprof_module_enter", reinterpret_cast<void*>(&pre_hook), kMethFastcall, nullptr};
MethodDef g_post_def = {"gmemprof_module_exit", reinterpret_cast<void*>(&post_hook), kMethFastcall, nullptr};

// Module.__call__ while modules are watched: a small Python function
// around the __call__ it replaced (torch's _wrapped_call_impl) that calls
// module_enter and module_exit, written in C. Global hooks would send
// every module call down _call_impl's slow path (a closure, hook lists,
// try/except); this adds one Python frame and two C calls, and the fast
// path stays. It is Python, not C, for torch.compile: dynamo traces
// through it, folds torch.compiler.is_compiling() to True and so traces
// the module as it does unprofiled, where a C function would be a call it
// cannot trace (a graph break at every module). Its code's file is
// "<gmemprof>", which the frame walk skips.
constexpr char kWrapperFile[] = "<gmemprof>";
constexpr char kWrapperSource[] = R"(
__name__ = "gmemprof"


def make(orig, enter, leave):
    try:
        from torch.compiler import is_compiling
    except ImportError:
        def is_compiling():
            return False

    def __call__(self, *args, **kwargs):
        if is_compiling() or not enter(self):
            return orig(self, *args, **kwargs)
        try:
            return orig(self, *args, **kwargs)
        finally:
            leave(self)

    __call__.__qualname__ = "Module.__call__"
    __call__.__wrapped__ = orig
    return __call__
)";

O g_orig_call;    // the replaced Module.__call__ (a reference), once seen
O g_wrapper;      // the wrapper (a reference), made once
O g_wrapper_code;  // its code (a reference): left out of whole stacks
bool g_said_replaced;  // the line saying another __call__ is in place went out

O wrapper_enter(O, O m) { return P.BoolFromLong(module_enter(m) ? 1 : 0); }
O wrapper_leave(O, O m) {
  module_exit(m);
  return none();
}
MethodDef g_enter_def = {"gmemprof_module_enter", reinterpret_cast<void*>(&wrapper_enter), kMethO, nullptr};
MethodDef g_leave_def = {"gmemprof_module_exit", reinterpret_cast<void*>(&wrapper_leave), kMethO, nullptr};

// The wrapper of orig: kWrapperSource's make(orig, enter, leave).
O make_wrapper(O orig) {
  O code = P.CompileString(kWrapperSource, kWrapperFile, kFileInput);
  O globals = code ? P.DictNew() : nullptr;
  // as exec() does: dynamo, inlining the wrapper, reads its globals'
  // __builtins__, which PyEval_EvalCode does not put there
  O builtins = globals ? P.ImportModule("builtins") : nullptr;
  bool ok = builtins && P.DictSetItemString(globals, "__builtins__", builtins) == 0;
  O done = ok ? P.EvalCode(code, globals, globals) : nullptr;
  O make = done ? P.DictGetItemString(globals, "make") : nullptr;  // borrowed
  O enter = make ? P.CFunctionNewEx(&g_enter_def, nullptr, nullptr) : nullptr;
  O leave = enter ? P.CFunctionNewEx(&g_leave_def, nullptr, nullptr) : nullptr;
  O args = leave ? P.TupleNew(3) : nullptr;
  O w = nullptr;
  if (args) {
    for (O o : {orig, enter, leave}) P.IncRef(o);
    P.TupleSetItem(args, 0, orig);  // steals
    P.TupleSetItem(args, 1, enter);
    P.TupleSetItem(args, 2, leave);
    w = P.Call(make, args, nullptr);
  }
  for (O o : {args, leave, enter, done, builtins, globals, code})
    if (o) P.DecRef(o);
  P.ErrClear();
  return w;
}

// ---- frames -------------------------------------------------------------------

std::atomic<bool> g_setup{false};  // the skipped directories are known
enum { kHooksOut, kHooksIn, kHooksFailed };
std::atomic<int> g_hooks{kHooksOut};  // changed under the GIL
O g_handles[2];                       // the hooks' RemovableHandles while in
std::vector<std::string> g_skip;      // file prefixes that are not the program's code

std::string dir_of(const std::string& file) {
  size_t s = file.rfind('/');
  return s == std::string::npos ? std::string() : file.substr(0, s + 1);
}

void learn_skips() {
  O torch = P.ImportModule("torch");
  if (torch) {
    std::string d = dir_of(attr_str(torch, "__file__"));
    if (!d.empty()) g_skip.push_back(d);
    P.DecRef(torch);
  }
  O sc = P.ImportModule("sysconfig");
  O gp = sc ? P.GetAttrString(sc, "get_paths") : nullptr;
  O args = gp ? P.TupleNew(0) : nullptr;
  O paths = args ? P.Call(gp, args, nullptr) : nullptr;
  for (const char* k : {"stdlib", "platstdlib"}) {
    O v = paths ? P.DictGetItemString(paths, k) : nullptr;  // borrowed
    std::string s = v ? utf8(v) : std::string();
    if (!s.empty()) g_skip.push_back(s + "/");
  }
  for (O o : {paths, args, gp, sc})
    if (o) P.DecRef(o);
  P.ErrClear();
}

// The wrapper goes in where Module.__call__ is still torch's own Python
// function (_wrapped_call_impl): where another library replaced it, or
// GMP_BRIDGE_WATCH_MODULE_HOOKS asks, the global hooks serve.
bool wrap_call(O mod) {
  if (!P.CompileString || (g_watching->load(std::memory_order_relaxed) & GMP_BRIDGE_WATCH_MODULE_HOOKS)) return false;
  O cls = P.GetAttrString(mod, "Module");
  O cur = cls ? P.GetAttrString(cls, "__call__") : nullptr;
  bool ok = false;
  if (cur && g_wrapper && cur == g_wrapper) {
    ok = true;  // still in: another library put back the wrapper it had saved
  } else if (cur && (cur == g_orig_call || attr_str(cur, "__name__") == "_wrapped_call_impl")) {
    // both kept for the life of the process: a bound __call__ taken while
    // the wrapper was in may run after it went out
    if (!g_orig_call) {
      g_orig_call = cur;
      P.IncRef(cur);
    }
    if (!g_wrapper) {
      g_wrapper = make_wrapper(g_orig_call);
      g_wrapper_code = g_wrapper ? P.GetAttrString(g_wrapper, "__code__") : nullptr;
    }
    ok = cur == g_orig_call && g_wrapper && P.SetAttrString(cls, "__call__", g_wrapper) == 0;
  } else if (cur && !g_said_replaced) {
    g_said_replaced = true;
    const gmp_bridge_host* h = g_host->load(std::memory_order_acquire);
    std::string line = "torch.nn.Module.__call__ is " + attr_str(cur, "__module__") + "." +
                       attr_str(cur, "__qualname__") +
                       ", not torch's: module calls are followed through PyTorch's global module hooks "
                       "(slower, and a model torch.compile'd inside a window runs as several graphs)";
    if (h) h->log(1, line.c_str());
  }
  g_wrapped = ok;
  for (O o : {cur, cls})
    if (o) P.DecRef(o);
  P.ErrClear();
  return ok;
}

// Puts torch's Module.__call__ back, unless another library replaced ours.
void unwrap_call() {
  if (!g_wrapped) return;
  g_wrapped = false;
  O mod = P.ImportModule("torch.nn.modules.module");
  O cls = mod ? P.GetAttrString(mod, "Module") : nullptr;
  O cur = cls ? P.GetAttrString(cls, "__call__") : nullptr;
  if (cur && cur == g_wrapper) P.SetAttrString(cls, "__call__", g_orig_call);
  for (O o : {cur, cls, mod})
    if (o) P.DecRef(o);
  P.ErrClear();
}

bool register_hooks() {
  O mod = P.ImportModule("torch.nn.modules.module");
  if (!mod) return false;
  if (!g_call_impl) {  // kept for the life of the process, like the code tables' entries
    O cls = P.GetAttrString(mod, "Module");
    O fn = cls ? P.GetAttrString(cls, "_call_impl") : nullptr;
    g_call_impl = fn ? P.GetAttrString(fn, "__code__") : nullptr;
    for (O o : {fn, cls})
      if (o) P.DecRef(o);
  }
  if (wrap_call(mod)) {
    P.DecRef(mod);
    return true;
  }
  bool ok = false;
  O reg_pre = P.GetAttrString(mod, "register_module_forward_pre_hook");
  O reg_post = P.GetAttrString(mod, "register_module_forward_hook");
  O fpre = P.CFunctionNewEx(&g_pre_def, nullptr, nullptr);
  O fpost = P.CFunctionNewEx(&g_post_def, nullptr, nullptr);
  O a1 = P.TupleNew(1), a2 = P.TupleNew(1), kw = P.DictNew(), yes = P.BoolFromLong(1);
  if (reg_pre && reg_post && fpre && fpost && a1 && a2 && kw && yes) {
    P.IncRef(fpre);
    P.TupleSetItem(a1, 0, fpre);  // steals
    P.IncRef(fpost);
    P.TupleSetItem(a2, 0, fpost);
    P.DictSetItemString(kw, "always_call", yes);
    // The exit hook first: an exit without its enter is ignored, an enter
    // without its exit would leave ranges open.
    g_handles[1] = P.Call(reg_post, a2, kw);
    g_handles[0] = g_handles[1] ? P.Call(reg_pre, a1, nullptr) : nullptr;
    ok = g_handles[0] && g_handles[1];
  }
  for (O o : {yes, kw, a2, a1, fpost, fpre, reg_post, reg_pre, mod})
    if (o) P.DecRef(o);
  P.ErrClear();
  return ok;
}

void unregister_hooks() {
  unwrap_call();
  for (O& h : g_handles) {
    O rm = h ? P.GetAttrString(h, "remove") : nullptr;
    O args = rm ? P.TupleNew(0) : nullptr;
    O r = args ? P.Call(rm, args, nullptr) : nullptr;
    for (O o : {r, args, rm, h})
      if (o) P.DecRef(o);
    h = nullptr;
  }
  P.ErrClear();
  g_hook_gen.fetch_add(1, std::memory_order_relaxed);
}

// The hooks as the watch bits want them: nothing to do.
bool hooks_settled(bool modules) {
  int h = g_hooks.load(std::memory_order_relaxed);
  return modules ? h != kHooksOut : h != kHooksIn;
}

struct FrameKey {
  O code;
  int at;
  bool operator==(const FrameKey& o) const { return code == o.code && at == o.at; }
};
struct FrameKeyHash {
  size_t operator()(const FrameKey& k) const {
    return (reinterpret_cast<uintptr_t>(k.code) >> 4) * 0x9E3779B97F4A7C15ull ^ static_cast<size_t>(k.at);
  }
};
// code objects are kept alive by these tables (a reference each), so an
// address is never another code's
std::unordered_map<O, bool> g_user;                          // code -> the program's own
std::unordered_map<FrameKey, uint32_t, FrameKeyHash> g_frames;  // (code, instruction) -> id
std::unordered_map<uint64_t, uint32_t> g_stacks;             // hash of the (code, instruction)s -> id

bool is_user(O code) {
  auto it = g_user.find(code);
  if (it != g_user.end()) return it->second;
  ErrGuard eg;
  std::string f = attr_str(code, "co_filename");
  bool user = !f.empty() && f.compare(0, 7, "<frozen") != 0 && f != kWrapperFile;
  for (const std::string& p : g_skip)
    if (user && f.compare(0, p.size(), p) == 0) user = false;
  P.IncRef(code);
  g_user.emplace(code, user);
  return user;
}

int where(O frame) { return P.FrameLasti ? P.FrameLasti(frame) : P.FrameLine(frame); }

std::string frame_text(O frame, O code) {
  ErrGuard eg;
  std::string file = attr_str(code, "co_filename"), fn = attr_str(code, "co_qualname");
  if (fn.empty()) fn = attr_str(code, "co_name");
  for (char& c : fn)
    if (c == ' ' || c == '\n') c = '_';  // the format's FUNCTION has no space
  return file + ":" + std::to_string(P.FrameLine(frame)) + " " + fn;
}

}  // namespace

void bind(std::atomic<const gmp_bridge_host*>* host, std::atomic<unsigned>* watching, ModuleChanged changed) {
  g_host = host;
  g_watching = watching;
  g_changed = changed;
}

bool present() { return resolve() && P.IsInitialized(); }

bool holds_gil() { return g_api.load(std::memory_order_relaxed) > 0 && P.IsInitialized() && P.GILState_Check(); }

void setup() {
  bool modules = modules_watched();
  if (g_setup.load(std::memory_order_relaxed) && hooks_settled(modules)) return;
  ErrGuard eg;
  if (!g_setup.load(std::memory_order_relaxed)) learn_skips();
  g_setup.store(true, std::memory_order_relaxed);
  if (hooks_settled(modules)) return;
  if (!modules) {
    unregister_hooks();
    g_hooks.store(kHooksOut, std::memory_order_relaxed);
    return;
  }
  bool ok = register_hooks();
  g_hooks.store(ok ? kHooksIn : kHooksFailed, std::memory_order_relaxed);
  const gmp_bridge_host* h = g_host->load(std::memory_order_acquire);
  if (!ok && h)
    h->log(1, "torch.nn.Module's calls cannot be followed (neither a __call__ wrapper nor global hooks went in): "
              "no module ranges in this process");
}

// Runs f with the GIL on a thread that runs Python, taking the GIL back
// for it where this thread released it (an op's start, an optimizer
// step's end); on any other thread (autograd's), or while Python shuts
// down, does nothing.
template <class F>
void with_gil(F f) {
  if (g_api.load(std::memory_order_relaxed) <= 0 || !P.IsInitialized() || !P.ThisThreadState() ||
      (P.Finalizing && P.Finalizing()))
    return;
  if (P.GILState_Check()) {
    f();
    return;
  }
  int g = P.Ensure();
  f();
  P.Release(g);
}

void sync_hooks() {
  if (!g_setup.load(std::memory_order_relaxed) || !hooks_settled(modules_watched())) with_gil(setup);
}

void op_frame_ids(bool frames, bool stack, uint32_t* frame, uint32_t* whole) {
  *frame = 0;
  *whole = 0;
  if (!frames && g_setup.load(std::memory_order_relaxed) && hooks_settled(modules_watched())) return;
  with_gil([&] {
    setup();
    if (frames) frame_ids(stack, frame, whole);
  });
}

const char* module_path(const void* token) { return token ? static_cast<const Node*>(token)->path.c_str() : ""; }

void frame_ids(bool stack, uint32_t* frame, uint32_t* whole) {
  *frame = 0;
  *whole = 0;
  const gmp_bridge_host* h = g_host->load(std::memory_order_acquire);
  if (!g_setup.load(std::memory_order_relaxed) || !h) return;
  O f = P.GetFrame();
  if (!f) return;
  P.IncRef(f);
  uint64_t hash = 0xcbf29ce484222325ull;
  for (int n = 0; f && n < kMaxFrames; n++) {
    O code = P.FrameCode(f);
    int at = where(f);
    if (!*frame && code && is_user(code)) {
      auto it = g_frames.find(FrameKey{code, at});
      if (it != g_frames.end()) {
        *frame = it->second;
      } else {
        std::string t = frame_text(f, code);
        *frame = h->intern(t.data(), t.size());
        P.IncRef(code);
        g_frames.emplace(FrameKey{code, at}, *frame);
      }
    }
    if (stack && code != g_wrapper_code)
      hash = (hash ^ (reinterpret_cast<uintptr_t>(code) + static_cast<uint64_t>(at))) * 0x100000001b3ull;
    if (code) P.DecRef(code);
    if (!stack && *frame) break;
    O back = P.FrameBack(f);
    P.DecRef(f);
    f = back;
  }
  if (f) P.DecRef(f);
  if (!stack) return;
  auto it = g_stacks.find(hash);
  if (it != g_stacks.end()) {
    *whole = it->second;
    return;
  }
  // first time this stack is seen: its text, innermost frame first
  std::string text;
  f = P.GetFrame();
  if (f) P.IncRef(f);
  for (int n = 0; f && n < kMaxFrames; n++) {
    O code = P.FrameCode(f);
    if (code && code != g_wrapper_code) {
      if (!text.empty()) text += '\n';
      text += frame_text(f, code);
    }
    if (code) P.DecRef(code);
    O back = P.FrameBack(f);
    P.DecRef(f);
    f = back;
  }
  if (f) P.DecRef(f);
  *whole = text.empty() ? 0 : h->intern(text.data(), text.size());
  g_stacks.emplace(hash, *whole);
}

}  // namespace gmp_py
