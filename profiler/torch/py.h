// The Python side of the PyTorch bridge (py.cpp): nn.Module ranges from a
// wrapper of torch.nn.Module.__call__ (or PyTorch's global module hooks),
// and the program's source frame at an allocation. Python is reached
// through dlsym, never linked: a process without Python (a C++ program
// using libtorch) loads the bridge all the same and gets ops and tensors.
//
// Everything here runs on a thread that holds the GIL already, but for
// op_frame_ids and sync_hooks, which take it on a thread that runs Python
// (the profiler's own threads never call in).
#ifndef GMEMPROF_PROFILER_TORCH_PY_H
#define GMEMPROF_PROFILER_TORCH_PY_H

#include <atomic>
#include <cstdint>

#include "torch_bridge.h"

namespace gmp_py {

// Called under the GIL each time the innermost module whose range is open
// on this thread changes (a token for module_path; nullptr: none), as a
// module call begins or ends; reset: this thread's modules were dropped
// (they went out with the hooks) and the call says nothing of them.
using ModuleChanged = void (*)(const void* innermost, bool reset);
// The bridge's host and watch bits (GMP_BRIDGE_WATCH_*), read by the hooks,
// and who hears of module changes (may be nullptr).
void bind(std::atomic<const gmp_bridge_host*>* host, std::atomic<unsigned>* watching, ModuleChanged changed);
// Python's symbols are in the process and the interpreter runs.
bool present();
// The calling thread holds the GIL (false without Python).
bool holds_gil();
// Under the GIL: learns once which files are torch's and the standard
// library's, and puts the module hooks (the __call__ wrapper or the global
// hooks) in while modules are watched and out while they are not. Cheap
// when nothing changes.
void setup();
// setup() where the watch bits may have changed, from any thread that is
// not inside an allocator's or the profiler's lock: a thread that runs
// Python takes the GIL for it when there is work, any other does nothing.
void sync_hooks();
// A module token's path ("" for nullptr).
const char* module_path(const void* token);
// The ids (host->intern) of the innermost frame of the program's own code
// and, when stack, of the whole stack; 0 where there is none. Under the
// GIL only; a copy of the text only the first time a frame is seen.
void frame_ids(bool stack, uint32_t* frame, uint32_t* whole);
// The same at the start of an op, where PyTorch's Python bindings have
// released the GIL: on a thread that runs Python (it has a thread state)
// it takes the GIL back for the walk, as memory history does before its
// allocator lock; on any other thread (autograd's) it does nothing. Also
// runs setup() while it has work. Never called with an allocator lock held.
void op_frame_ids(bool frames, bool stack, uint32_t* frame, uint32_t* whole);

}  // namespace gmp_py

#endif
