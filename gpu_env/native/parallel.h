// parallel_for for the batched CPU entry points: environments are independent, so they are spread
// over threads and the order never changes a result.
//
// The helper threads are kept between calls (a raw-frame step is about a millisecond, and starting and
// joining a std::thread per call cost several percent of it). One pool per process, used by one call at
// a time: a call that finds it busy (another Python thread stepping another batch with the GIL
// released) starts its own threads for that call. After fork() the child forgets the parent's pool (its
// threads do not exist there) and builds a new one on first use.
#pragma once

#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace gpu_env_native {

namespace detail {

// A type-erased job: run(ctx, i) for the indices taken from `next`.
struct Job {
  void (*run)(void*, int32_t) = nullptr;
  void* ctx = nullptr;
  int32_t n = 0;
  int32_t helpers = 0;  // how many pool threads take part (the caller always does)
  std::atomic<int32_t> next{0};
};

inline void drain(Job& job) {
  for (;;) {
    const int32_t i = job.next.fetch_add(1, std::memory_order_relaxed);
    if (i >= job.n) return;
    job.run(job.ctx, i);
  }
}

class Pool {
 public:
  // Run `job` on the caller and job.helpers pool threads; false (nothing run) if the pool is busy.
  bool try_run(Job& job) {
    std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
    if (!busy.owns_lock()) return false;
    grow(job.helpers);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = &job;
      pending_ = job.helpers;
      ++generation_;
    }
    wake_.notify_all();
    drain(job);
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return pending_ == 0; });
    job_ = nullptr;
    return true;
  }

  // The process-wide pool; a fresh one in a forked child (the old one is leaked there on purpose:
  // its mutexes may be held by threads that the child does not have).
  static Pool& instance() {
    static bool registered = [] {
      pthread_atfork(nullptr, nullptr, [] { current() = nullptr; });
      return true;
    }();
    (void)registered;
    Pool*& p = current();
    if (p == nullptr) p = new Pool();  // never deleted: helper threads block on it until the process ends
    return *p;
  }

 private:
  static Pool*& current() {
    static Pool* p = nullptr;
    return p;
  }

  void grow(int32_t helpers) {
    while (static_cast<int32_t>(threads_) < helpers) {
      const int32_t index = static_cast<int32_t>(threads_++);
      std::thread([this, index] { serve(index); }).detach();
    }
  }

  void serve(int32_t index) {
    uint64_t seen = 0;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      seen = generation_;  // a thread started for a call joins that call (its generation is not yet set)
      if (job_ != nullptr && index < job_->helpers) seen = generation_ - 1;
    }
    for (;;) {
      Job* job = nullptr;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return generation_ != seen; });
        seen = generation_;
        if (job_ == nullptr || index >= job_->helpers) continue;
        job = job_;
      }
      drain(*job);
      std::lock_guard<std::mutex> lock(mutex_);
      if (--pending_ == 0) done_.notify_one();
    }
  }

  std::mutex busy_;   // held for a whole call
  std::mutex mutex_;  // guards job_, pending_, generation_
  std::condition_variable wake_, done_;
  Job* job_ = nullptr;
  int32_t pending_ = 0;
  uint64_t generation_ = 0;
  size_t threads_ = 0;  // only touched under busy_
};

}  // namespace detail

// Run fn(i) for i in [0, n) on `num_threads` threads: the calling thread and num_threads - 1 helpers
// take indices one at a time from a shared counter, so a thread that the OS preempts (the machine may
// be shared) does not hold back a fixed share of the batch. Not re-entrant: fn must not call
// parallel_for (the calling thread holds the pool for the whole call).
template <class Fn>
void parallel_for(int32_t n, int32_t num_threads, Fn fn) {
  if (num_threads <= 1 || n <= 1) {
    for (int32_t i = 0; i < n; ++i) fn(i);
    return;
  }
  if (num_threads > n) num_threads = n;
  detail::Job job;
  job.run = [](void* ctx, int32_t i) { (*static_cast<Fn*>(ctx))(i); };
  job.ctx = &fn;
  job.n = n;
  job.helpers = num_threads - 1;
  if (detail::Pool::instance().try_run(job)) return;
  std::vector<std::thread> workers;  // the pool is busy with another batch's call
  workers.reserve(static_cast<size_t>(job.helpers));
  for (int32_t t = 0; t < job.helpers; ++t) workers.emplace_back([&job] { detail::drain(job); });
  detail::drain(job);
  for (auto& w : workers) w.join();
}

}  // namespace gpu_env_native
