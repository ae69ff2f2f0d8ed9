#include "mpi/rank_exchange.hpp"

#include <thread>

namespace ptxrt::mpi::detail {

namespace {

// The exchange has the communicator (a duplicate of the caller's) to itself.
constexpr int news_tag = 1;
constexpr int end_tag = 2;
constexpr double alive_news = 0.0;
constexpr auto alive_interval = std::chrono::seconds(1);
// How long finish() sleeps when nothing arrived, so that a waiting rank leaves the CPU to the
// ranks of its node that still tune.
constexpr auto idle_wait = std::chrono::milliseconds(2);

void drop(MPI_Request& request) {
  if (request != MPI_REQUEST_NULL) MPI_Request_free(&request);
}

// A receive whose sender will never be heard from again: withdrawn without waiting.
void abandon_receive(MPI_Request& request) {
  if (request == MPI_REQUEST_NULL) return;
  MPI_Cancel(&request);
  MPI_Request_free(&request);
}

}  // namespace

RankExchange::RankExchange(const Communicator& communicator)
    : communicator_(communicator),
      peers_(static_cast<std::size_t>(communicator.size())),
      news_sent_to_(static_cast<std::size_t>(communicator.size())),
      last_shown_alive_(Clock::now()) {
  for (int source = 0; source < communicator_.size(); ++source) {
    peers_[static_cast<std::size_t>(source)].last_heard = last_shown_alive_;
    if (source != communicator_.rank()) post(source);
  }
}

RankExchange::~RankExchange() {
  if (finished_) return;
  for (Peer& peer : peers_) {
    abandon_receive(peer.request);
    drop(peer.end_request);
  }
  for (Sent& sent : sent_)
    for (MPI_Request& request : sent.requests) drop(request);
}

void RankExchange::post(int source) {
  Peer& peer = peers_[static_cast<std::size_t>(source)];
  check(MPI_Irecv(&peer.news, 1, MPI_DOUBLE, source, news_tag, communicator_.get(), &peer.request),
        "MPI_Irecv");
}

bool RankExchange::read_news(int source) {
  Peer& peer = peers_[static_cast<std::size_t>(source)];
  bool any = false;
  while (peer.request != MPI_REQUEST_NULL) {
    int arrived = 0;
    check(MPI_Test(&peer.request, &arrived, MPI_STATUS_IGNORE), "MPI_Test");
    if (!arrived) break;
    any = true;
    ++peer.news_received;
    if (peer.news != alive_news && (!best_ || peer.news < *best_)) best_ = peer.news;
    post(source);
  }
  if (any) peer.last_heard = Clock::now();
  return any;
}

bool RankExchange::read_end(int source) {
  Peer& peer = peers_[static_cast<std::size_t>(source)];
  if (peer.report) return false;
  int arrived = 0;
  MPI_Status status;
  check(MPI_Iprobe(source, end_tag, communicator_.get(), &arrived, &status), "MPI_Iprobe");
  if (!arrived) return false;
  int length = 0;
  check(MPI_Get_count(&status, MPI_CHAR, &length), "MPI_Get_count");
  std::string text(static_cast<std::size_t>(length), '\0');
  check(MPI_Recv(text.data(), length, MPI_CHAR, source, end_tag, communicator_.get(),
                 MPI_STATUS_IGNORE),
        "MPI_Recv");
  // "<news sent to this rank>\n<report>"
  const std::size_t newline = text.find('\n');
  peer.news_expected = std::stoi(text.substr(0, newline));
  peer.report = text.substr(newline + 1);
  peer.last_heard = Clock::now();
  return true;
}

std::optional<double> RankExchange::best() {
  for (int source = 0; source < communicator_.size(); ++source)
    if (source != communicator_.rank()) read_news(source);
  return best_;
}

void RankExchange::offer(double milliseconds) {
  if (best_ && *best_ <= milliseconds) return;
  best_ = milliseconds;
  send_news(milliseconds);
}

void RankExchange::show_alive() {
  if (Clock::now() - last_shown_alive_ < alive_interval) return;
  send_news(alive_news);
}

void RankExchange::send_news(double milliseconds) {
  forget_completed_sends();
  last_shown_alive_ = Clock::now();
  Sent& sent = sent_.emplace_back();
  sent.milliseconds = milliseconds;
  sent.requests.assign(peers_.size(), MPI_REQUEST_NULL);
  for (int rank = 0; rank < communicator_.size(); ++rank) {
    if (rank == communicator_.rank()) continue;
    check(MPI_Isend(&sent.milliseconds, 1, MPI_DOUBLE, rank, news_tag, communicator_.get(),
                    &sent.requests[static_cast<std::size_t>(rank)]),
          "MPI_Isend");
    ++news_sent_to_[static_cast<std::size_t>(rank)];
  }
}

void RankExchange::forget_completed_sends() {
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

void RankExchange::withdraw(int source) {
  Peer& peer = peers_[static_cast<std::size_t>(source)];
  if (peer.request == MPI_REQUEST_NULL) return;
  check(MPI_Cancel(&peer.request), "MPI_Cancel");
  check(MPI_Wait(&peer.request, MPI_STATUS_IGNORE), "MPI_Wait");
}

std::vector<std::optional<std::string>> RankExchange::finish(const std::string& report,
                                                             std::chrono::seconds silence_limit) {
  const int self = communicator_.rank();
  for (int rank = 0; rank < communicator_.size(); ++rank) {
    if (rank == self) continue;
    Peer& peer = peers_[static_cast<std::size_t>(rank)];
    peer.end_sent = std::to_string(news_sent_to_[static_cast<std::size_t>(rank)]) + '\n' + report;
    check(MPI_Isend(peer.end_sent.data(), Communicator::count_of(peer.end_sent.size()), MPI_CHAR,
                    rank, end_tag, communicator_.get(), &peer.end_request),
          "MPI_Isend");
  }
  for (int waiting = communicator_.size() - 1; waiting > 0;) {
    bool heard = false;
    for (int source = 0; source < communicator_.size(); ++source) {
      Peer& peer = peers_[static_cast<std::size_t>(source)];
      if (source == self || peer.lost || peer.request == MPI_REQUEST_NULL) continue;
      heard = read_news(source) || heard;
      heard = read_end(source) || heard;
      if (peer.news_expected && peer.news_received >= *peer.news_expected) {
        withdraw(source);
        --waiting;
      } else if (Clock::now() - peer.last_heard > silence_limit) {
        peer.lost = true;
        --waiting;
      }
    }
    if (!heard && waiting > 0) std::this_thread::sleep_for(idle_wait);
  }
  complete_sends();
  finished_ = true;
  std::vector<std::optional<std::string>> reports;
  for (int rank = 0; rank < communicator_.size(); ++rank)
    reports.push_back(rank == self ? std::optional<std::string>(report)
                                   : peers_[static_cast<std::size_t>(rank)].report);
  return reports;
}

void RankExchange::complete_sends() {
  const auto complete = [&](MPI_Request& request, int destination) {
    if (peers_[static_cast<std::size_t>(destination)].lost)
      drop(request);  // what is sent to a dead rank may never complete
    else if (request != MPI_REQUEST_NULL)
      check(MPI_Wait(&request, MPI_STATUS_IGNORE), "MPI_Wait");
  };
  for (Sent& sent : sent_)
    for (int rank = 0; rank < communicator_.size(); ++rank)
      complete(sent.requests[static_cast<std::size_t>(rank)], rank);
  sent_.clear();
  for (int rank = 0; rank < communicator_.size(); ++rank) {
    Peer& peer = peers_[static_cast<std::size_t>(rank)];
    complete(peer.end_request, rank);
    if (peer.lost) abandon_receive(peer.request);
  }
}

}  // namespace ptxrt::mpi::detail
