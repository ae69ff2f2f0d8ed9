// ptxrt::mpi::tune: each rank tunes its share with the best time shared, then the shares'
// reports are merged on every rank.
#include "mpi/best_time_exchange.hpp"
#include "mpi/communicator.hpp"
#include "mpi/tune_report_exchange.hpp"
#include "ptxrt/error.hpp"
#include "ptxrt/mpi.hpp"

namespace ptxrt::mpi {

namespace {

// The rank's measurer, handed the better of its own best and the ranks' best known, and offering
// every ok time it measures to the others.
class SharedBestMeasurer : public Measurer {
 public:
  SharedBestMeasurer(Measurer& measurer, detail::BestTimeExchange& exchange)
      : measurer_(measurer), exchange_(exchange) {}

  Measurement measure(const Candidate& candidate, std::optional<double> best_ms) override {
    if (const std::optional<double> shared = exchange_.best();
        shared && (!best_ms || *shared < *best_ms))
      best_ms = shared;
    Measurement measurement = measurer_.measure(candidate, best_ms);
    if (measurement.status == MeasurementStatus::ok) exchange_.offer(measurement.median_ms);
    return measurement;
  }

 private:
  Measurer& measurer_;
  detail::BestTimeExchange& exchange_;
};

}  // namespace

TuneReport tune(MPI_Comm communicator, const TuningSpace& space, const CandidateCompiler& compile,
                Measurer& measurer, const TuneOptions& options,
                const std::function<void(const TuneProgress&)>& progress) {
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
  detail::BestTimeExchange exchange(world);
  SharedBestMeasurer shared(measurer, exchange);
  const TuneReport share = ptxrt::tune(space, compile, shared, share_options, progress);
  exchange.finish();

  std::vector<TuneReport> shares;
  for (const std::string& text : world.all_gather_text(detail::share_report_to_text(share)))
    shares.push_back(detail::share_report_from_text(text));
  return detail::merge_share_reports(share, shares, space.enumerate().allowed);
}

}  // namespace ptxrt::mpi
