#include "mpi/best_time_exchange.hpp"

namespace ptxrt::mpi::detail {

namespace {

// The exchange has the communicator (a duplicate of the caller's) to itself but for the reports
// gathered after it: one tag serves.
constexpr int best_time_tag = 1;

}  // namespace

BestTimeExchange::BestTimeExchange(const Communicator& communicator)
    : communicator_(communicator),
      inboxes_(static_cast<std::size_t>(communicator.size())),
      sent_to_(static_cast<std::size_t>(communicator.size())) {
  for (int source = 0; source < communicator_.size(); ++source)
    if (source != communicator_.rank()) post(source);
}

BestTimeExchange::~BestTimeExchange() {
  if (finished_) return;
  for (Inbox& inbox : inboxes_)
    if (inbox.request != MPI_REQUEST_NULL) {
      MPI_Cancel(&inbox.request);
      MPI_Request_free(&inbox.request);
    }
  for (Sent& sent : sent_)
    for (MPI_Request& request : sent.requests)
      if (request != MPI_REQUEST_NULL) MPI_Request_free(&request);
}

void BestTimeExchange::post(int source) {
  Inbox& inbox = inboxes_[static_cast<std::size_t>(source)];
  check(MPI_Irecv(&inbox.milliseconds, 1, MPI_DOUBLE, source, best_time_tag, communicator_.get(),
                  &inbox.request),
        "MPI_Irecv");
}

void BestTimeExchange::take(int source) {
  Inbox& inbox = inboxes_[static_cast<std::size_t>(source)];
  ++inbox.received;
  if (!best_ || inbox.milliseconds < *best_) best_ = inbox.milliseconds;
  post(source);
}

std::optional<double> BestTimeExchange::best() {
  for (int source = 0; source < communicator_.size(); ++source) {
    if (source == communicator_.rank()) continue;
    for (;;) {
      int arrived = 0;
      check(MPI_Test(&inboxes_[static_cast<std::size_t>(source)].request, &arrived,
                     MPI_STATUS_IGNORE),
            "MPI_Test");
      if (!arrived) break;
      take(source);
    }
  }
  return best_;
}

void BestTimeExchange::offer(double milliseconds) {
  forget_completed_sends();
  if (best_ && *best_ <= milliseconds) return;
  best_ = milliseconds;
  Sent& sent = sent_.emplace_back();
  sent.milliseconds = milliseconds;
  for (int rank = 0; rank < communicator_.size(); ++rank) {
    if (rank == communicator_.rank()) continue;
    MPI_Request& request = sent.requests.emplace_back(MPI_REQUEST_NULL);
    check(MPI_Isend(&sent.milliseconds, 1, MPI_DOUBLE, rank, best_time_tag, communicator_.get(),
                    &request),
          "MPI_Isend");
    ++sent_to_[static_cast<std::size_t>(rank)];
  }
}

void BestTimeExchange::forget_completed_sends() {
  while (!sent_.empty()) {
    std::vector<MPI_Request>& requests = sent_.front().requests;
    int completed = 0;
    check(MPI_Testall(static_cast<int>(requests.size()), requests.data(), &completed,
                      MPI_STATUSES_IGNORE),
          "MPI_Testall");
    if (!completed) return;
    sent_.pop_front();
  }
}

void BestTimeExchange::finish() {
  std::vector<int> expected(sent_to_.size());
  check(MPI_Alltoall(sent_to_.data(), 1, MPI_INT, expected.data(), 1, MPI_INT, communicator_.get()),
        "MPI_Alltoall");
  for (int source = 0; source < communicator_.size(); ++source) {
    if (source == communicator_.rank()) continue;
    Inbox& inbox = inboxes_[static_cast<std::size_t>(source)];
    while (inbox.received < expected[static_cast<std::size_t>(source)]) {
      check(MPI_Wait(&inbox.request, MPI_STATUS_IGNORE), "MPI_Wait");
      take(source);
    }
    // Nothing more is coming: the receive posted last is withdrawn.
    check(MPI_Cancel(&inbox.request), "MPI_Cancel");
    check(MPI_Wait(&inbox.request, MPI_STATUS_IGNORE), "MPI_Wait");
  }
  for (Sent& sent : sent_)
    check(MPI_Waitall(static_cast<int>(sent.requests.size()), sent.requests.data(),
                      MPI_STATUSES_IGNORE),
          "MPI_Waitall");
  sent_.clear();
  finished_ = true;
}

}  // namespace ptxrt::mpi::detail
