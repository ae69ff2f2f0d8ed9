// Internal: what a Graph shares with the executable graphs made from it.
#pragma once

#include <cuda.h>

#include <optional>
#include <vector>

#include "ptxrt/core/context.hpp"
#include "ptxrt/core/kernel.hpp"

namespace ptxrt::detail {

struct GraphOwner {
  GraphOwner() = default;
  GraphOwner(CUgraph graph_, Context home_) : graph(graph_), home(std::move(home_)) {}
  GraphOwner(const GraphOwner&) = delete;
  GraphOwner& operator=(const GraphOwner&) = delete;
  ~GraphOwner();  // cuGraphDestroy

  // The context made current to instantiate and update: the capturing stream's, or the first
  // node's.
  void adopt(const Context& context) {
    if (!home) home.emplace(context);
  }

  CUgraph graph = nullptr;
  std::optional<Context> home;
  std::vector<Kernel> kernels;  // of the nodes added here: they keep their modules loaded
};

// cuGraphGetNodes: every node, in the order added or captured.
std::vector<CUgraphNode> graph_nodes(CUgraph graph);

}  // namespace ptxrt::detail
