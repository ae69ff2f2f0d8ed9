// The whole public API of ptxrt's driver layer.
#pragma once

#include "ptxrt/context.hpp"
#include "ptxrt/device.hpp"
#include "ptxrt/driver.hpp"
#include "ptxrt/error.hpp"
#include "ptxrt/graph.hpp"
#include "ptxrt/image.hpp"
#include "ptxrt/kernel.hpp"
#include "ptxrt/library.hpp"
#include "ptxrt/managed_memory.hpp"
#include "ptxrt/memory.hpp"
#include "ptxrt/memory_pool.hpp"
#include "ptxrt/module.hpp"
#include "ptxrt/peer.hpp"
#include "ptxrt/stream.hpp"
#include "ptxrt/symbol.hpp"
