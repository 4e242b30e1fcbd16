#pragma once
// A minimal fork-join loop over [0, n) on `threads` std::threads. Work is handed out in blocks from an
// atomic counter; every index is processed by exactly one thread with deterministic code, so results
// never depend on the thread count or on scheduling (docs/ARCHITECTURE.md §4).
//
// The per-ISA units of the CPU executor compile this header with the namespace dpr renamed (cpu_isa_unit.cpp.in),
// so it instantiates no standard-library container: an inline function of one (compiled there for AVX-512) could
// stand in for the copy of a unit compiled for another ISA.
#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>

namespace dpr {

/// Runs f(index, thread) for index in [0, n) on up to `threads` threads (0 or 1: on the caller's), in blocks of
/// `block` indices. The first exception thrown by f stops the loop and is rethrown on the caller's thread.
template <class F>
void parallel_for(std::uint64_t n, unsigned threads, F&& f, std::uint64_t block = 1) {
    const std::uint64_t blocks = (n + block - 1) / block;
    if (threads > blocks) threads = static_cast<unsigned>(blocks);
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
                const std::uint64_t end = begin + block < n ? begin + block : n;
                for (std::uint64_t i = begin; i < end; ++i) f(i, tid);
            }
        } catch (...) {
            std::lock_guard<std::mutex> lock(error_mutex);
            if (!error) error = std::current_exception();
            next.store(n);
        }
    };
    std::thread** pool = new std::thread*[threads];
    for (unsigned t = 1; t < threads; ++t) pool[t] = new std::thread(worker, t);
    worker(0);
    for (unsigned t = 1; t < threads; ++t) {
        pool[t]->join();
        delete pool[t];
    }
    delete[] pool;
    if (error) std::rethrow_exception(error);
}

} // namespace dpr
