// The reports of a tune's shares, gathered from the ranks and merged into the report of the whole
// tune (mpi/distributed_tune.cpp): a share's report as text for the gather, and the merge.
#pragma once

#include <string>
#include <vector>

#include "ptxrt/tune/tuner.hpp"

namespace ptxrt::mpi::detail {

// What differs between the shares of one tune: everything but the space and its constraint
// pruning, which every share computes alike. JSON; the inverse throws Error (invalid_argument)
// for text that is not such a report.
std::string share_report_to_text(const TuneReport& share);
TuneReport share_report_from_text(const std::string& text);

// The whole tune's report: `space_report`'s space size and constraint pruning, the shares' lists
// joined and each put in the order of `allowed` (the space's enumeration), their counts summed,
// the slowest share's wall time, and the winner by `objective` over every result and resumed
// measurement.
TuneReport merge_share_reports(const TuneReport& space_report,
                               const std::vector<TuneReport>& shares,
                               const std::vector<TuningConfig>& allowed,
                               const Objective& objective);

}  // namespace ptxrt::mpi::detail
