#pragma once
// A minimal fork-join loop over [0, n) on `threads` std::threads. Work is handed out in blocks from an
// atomic counter; every index is processed by exactly one thread with deterministic code, so results
// never depend on the thread count or on scheduling (docs/ARCHITECTURE.md §4).
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace dpr {

template <class F>
void parallel_for(std::uint64_t n, unsigned threads, F&& f, std::uint64_t block = 1) {
    threads = static_cast<unsigned>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(threads, (n + block - 1) / block)));
    if (threads <= 1) {
        for (std::uint64_t i = 0; i < n; ++i) f(i, 0u);
        return;
    }
    std::atomic<std::uint64_t> next{0};
    std::exception_ptr error;
    std::mutex error_mutex;
    auto worker = [&](unsigned tid) {
        try {
            for (;;) {
                const std::uint64_t begin = next.fetch_add(block);
                if (begin >= n) break;
                const std::uint64_t end = std::min(n, begin + block);
                for (std::uint64_t i = begin; i < end; ++i) f(i, tid);
            }
        } catch (...) {
            std::lock_guard<std::mutex> lock(error_mutex);
            if (!error) error = std::current_exception();
            next.store(n);
        }
    };
    std::vector<std::thread> pool;
    pool.reserve(threads - 1);
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker, t);
    worker(0);
    for (auto& th : pool) th.join();
    if (error) std::rethrow_exception(error);
}

} // namespace dpr
