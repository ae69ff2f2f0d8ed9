// The whole public API of ptxrt's driver layer.
#pragma once

#include "ptxrt/core/context.hpp"
#include "ptxrt/core/device.hpp"
#include "ptxrt/core/driver.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/graph.hpp"
#include "ptxrt/core/image.hpp"
#include "ptxrt/core/kernel.hpp"
#include "ptxrt/core/library.hpp"
#include "ptxrt/core/managed_memory.hpp"
#include "ptxrt/core/memory.hpp"
#include "ptxrt/core/memory_pool.hpp"
#include "ptxrt/core/module.hpp"
#include "ptxrt/core/peer.hpp"
#include "ptxrt/core/stream.hpp"
#include "ptxrt/core/symbol.hpp"
