#pragma once

// The allocator's settings, which each executable's main applies before anything else.

#ifdef STRATA_MIMALLOC
#include <mimalloc.h>
#endif

namespace strata {

// mimalloc returns the pages of freed memory to the system 25 ms after they fall free
// (decommit_delay), and takes them back with a page fault each when they are used again. A
// node's requests free and reallocate the same few megabytes continuously: at 1 s, a node
// under load spends 5-8% less CPU per write (PERF.md, "Session 41"), and the memory is still
// returned a second after the load ends. MIMALLOC_DECOMMIT_DELAY in the environment wins.
inline void ConfigureAllocator() {
#ifdef STRATA_MIMALLOC
  mi_option_set_default(mi_option_decommit_delay, 1000);
#endif
}

}  // namespace strata
