// parallel_for for the batched CPU entry points: environments are independent, so they are spread
// over threads and the order never changes a result.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace gpu_env_native {

// Run fn(i) for i in [0, n) on `num_threads` threads: the calling thread and num_threads - 1 new
// ones take indices one at a time from a shared counter, so a thread that the OS preempts (the
// machine may be shared) does not hold back a fixed share of the batch.
template <class Fn>
void parallel_for(int32_t n, int32_t num_threads, Fn fn) {
  if (num_threads <= 1 || n <= 1) {
    for (int32_t i = 0; i < n; ++i) fn(i);
    return;
  }
  if (num_threads > n) num_threads = n;
  std::atomic<int32_t> next{0};
  auto work = [&next, n, &fn] {
    for (;;) {
      const int32_t i = next.fetch_add(1, std::memory_order_relaxed);
      if (i >= n) return;
      fn(i);
    }
  };
  std::vector<std::thread> workers;
  workers.reserve(static_cast<size_t>(num_threads - 1));
  for (int32_t t = 1; t < num_threads; ++t) workers.emplace_back(work);
  work();
  for (auto& w : workers) w.join();
}

}  // namespace gpu_env_native
