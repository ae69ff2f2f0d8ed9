// Which GPUs a piece of work runs on: every device, a list the user gave ("all" or "0,2"), and
// the checks that work split over several devices needs (no device twice; for timings compared
// across devices, one model only).
//
// Thread safety: plain functions; all_devices and one_model_devices ask the driver, the others
// touch no GPU.
#pragma once

#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "ptxrt/core/device.hpp"
#include "ptxrt/export.hpp"

namespace ptxrt {

// Every device the driver sees: 0, 1, ..., Device::count() - 1.
PTXRT_API std::vector<int> all_devices();

// `devices`, or all_devices() when it is empty. Error(invalid_argument) naming `user` (the
// function or option that was given the list) when an ordinal is listed twice.
PTXRT_API std::vector<int> devices_or_all(std::vector<int> devices, std::string_view user);

// "all" → nothing (every device); "0,2" → {0, 2}. Error(invalid_argument) naming the text for
// anything else: an empty item, a negative or non-numeric ordinal, one listed twice.
PTXRT_API std::optional<std::vector<int>> parse_device_list(std::string_view text);

// Error(invalid_argument) naming both devices unless every one of `devices` has the name and
// compute capability of the first: a timing on one model says nothing about another.
PTXRT_API void require_one_model(std::span<const DeviceProperties> devices);

// The properties of the devices `listed` names (nothing: all_devices()), which must be of one
// model (require_one_model): the devices a tune times on, one worker each.
PTXRT_API std::vector<DeviceProperties> one_model_devices(
    const std::optional<std::vector<int>>& listed);

}  // namespace ptxrt
