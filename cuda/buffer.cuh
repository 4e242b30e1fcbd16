#pragma once
// RAII device memory (plain cudaMalloc, never managed memory).
#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

#include "cuda/check.cuh"

namespace dpr::cuda {

template <class T>
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(std::size_t n) { resize(n); }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    ~DeviceBuffer() { release(); }

    void resize(std::size_t n) {
        if (n == n_) return;
        release();
        if (n) DPR_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&p_), n * sizeof(T)));
        n_ = n;
    }
    void upload(const T* host, std::size_t n, cudaStream_t s = 0) {
        resize(n > n_ ? n : n_);
        DPR_CUDA_CHECK(cudaMemcpyAsync(p_, host, n * sizeof(T), cudaMemcpyHostToDevice, s));
    }
    void upload(const std::vector<T>& v, cudaStream_t s = 0) { upload(v.data(), v.size(), s); }
    void download(std::vector<T>& v) const {
        v.resize(n_);
        DPR_CUDA_CHECK(cudaMemcpy(v.data(), p_, n_ * sizeof(T), cudaMemcpyDeviceToHost));
    }
    void zero() {
        if (n_) DPR_CUDA_CHECK(cudaMemset(p_, 0, n_ * sizeof(T)));
    }
    T* data() { return p_; }
    const T* data() const { return p_; }
    std::size_t size() const { return n_; }

private:
    void release() {
        if (p_) cudaFree(p_);
        p_ = nullptr;
        n_ = 0;
    }
    T* p_ = nullptr;
    std::size_t n_ = 0;
};

} // namespace dpr::cuda
