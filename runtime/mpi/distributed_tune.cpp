// ptxrt::mpi::tune: each rank tunes its share with the best time shared, then the shares'
// reports are merged on every rank.
#include <algorithm>

#include "mpi/communicator.hpp"
#include "mpi/rank_exchange.hpp"
#include "mpi/tune_report_exchange.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/mpi.hpp"

namespace ptxrt::mpi {

namespace {

// The rank's measurer, handed the better of its own best and the ranks' best known, and offering
// every ok time it measures to the others. Only a tune for time cuts by the best time: under
// another objective a slower config may win.
class SharedBestMeasurer : public Measurer {
 public:
  SharedBestMeasurer(Measurer& measurer, detail::RankExchange& exchange, bool cuts)
      : measurer_(measurer), exchange_(exchange), cuts_(cuts) {}

  Measurement measure(const Candidate& candidate, std::optional<double> best_ms) override {
    if (const std::optional<double> shared = exchange_.best();
        cuts_ && shared && (!best_ms || *shared < *best_ms))
      best_ms = shared;
    exchange_.show_alive();
    Measurement measurement = measurer_.measure(candidate, best_ms);
    if (measurement.status == MeasurementStatus::ok) exchange_.offer(measurement.median_ms);
    return measurement;
  }

 private:
  Measurer& measurer_;
  detail::RankExchange& exchange_;
  bool cuts_;
};

std::string lost_ranks_message(const std::vector<std::optional<std::string>>& reports,
                               std::chrono::seconds silence_limit) {
  std::string ranks;
  for (std::size_t rank = 0; rank < reports.size(); ++rank)
    if (!reports[rank]) ranks += (ranks.empty() ? "" : ", ") + std::to_string(rank);
  return "distributed tune: rank(s) " + ranks + " fell silent (nothing heard for " +
         std::to_string(silence_limit.count()) +
         " s) before reporting their share; every other rank finished its share and recorded it "
         "in the tuning database: the same tune run again with --resume times what is missing";
}

}  // namespace

TuneReport tune(MPI_Comm communicator, const TuningSpace& space, const CandidateCompiler& compile,
                Measurer& measurer, const TuneOptions& options,
                const std::function<void(const TuneProgress&)>& progress,
                std::chrono::seconds silence_limit) {
  if (options.share.count != 1)
    throw Error(ErrorKind::invalid_argument,
                "distributed tune: the ranks take the shares; options.share must be left whole, "
                "not " +
                    std::to_string(options.share.index) + " of " +
                    std::to_string(options.share.count));
  const detail::Communicator world(communicator);
  TuneOptions share_options = options;
  share_options.share = {static_cast<std::size_t>(world.rank()),
                         static_cast<std::size_t>(world.size())};
  detail::RankExchange exchange(world);
  SharedBestMeasurer shared(measurer, exchange, options.objective == Objective{});
  const TuneReport share =
      ptxrt::tune(space, compile, shared, share_options, [&](const TuneProgress& done) {
        exchange.show_alive();
        if (progress) progress(done);
      });
  const std::vector<std::optional<std::string>> reports =
      exchange.finish(detail::share_report_to_text(share), silence_limit);
  if (std::ranges::any_of(reports, [](const auto& report) { return !report; }))
    throw Error(ErrorKind::io, lost_ranks_message(reports, silence_limit));

  std::vector<TuneReport> shares;
  for (const std::optional<std::string>& text : reports)
    shares.push_back(detail::share_report_from_text(*text));
  return detail::merge_share_reports(share, shares, space.enumerate().allowed, options.objective);
}

}  // namespace ptxrt::mpi
