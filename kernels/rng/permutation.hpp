#pragma once
// A keyed pseudo-random bijection of [0, n) that is evaluated point by point, so that a random order
// of n items can be used without storing it (docs/ARCHITECTURE.md §2: state is regenerated, never stored).
// The halving adversary (workload W1 of docs/spec/checks.md §3.4) ranks the experts with it.
//
// Construction. Words of 2h bits, h = max(1, ceil(ceil(log2 n) / 2)), so the word domain [0, 4^h)
// holds [0, n) and is smaller than 4n. One pass E(x) = Feistel(x + c mod 4^h): a keyed shift, then a
// balanced Feistel network of kRounds rounds (L, R) -> (R, L ^ F_r(R)), F_r(R) = mix32(R ^ key_r) mod 2^h.
// Cycle-walking (apply E again until the value falls inside [0, n)) restricts the bijection E of
// [0, 4^h) to a bijection of [0, n) (Black & Rogaway 2002, "Ciphers with arbitrary finite domains");
// the walk always ends (the cycle through x returns to x < n) and takes fewer than 4 passes on average.
//
// Why the shift: for h >= 2 every Feistel network is an EVEN permutation of [0, 4^h), and cycle-walking
// a random even permutation gives a visibly non-uniform permutation of [0, n) (n = 5: chi-square
// p ~ 1e-64 over the 120 permutations). x -> x + c is a single 4^h-cycle (odd) for odd c, so with c
// uniform the pass is odd or even with probability 1/2 each. Why 12 rounds: with halves of 2 or 3 bits,
// 8 rounds still fail a chi-square over all 720 permutations of n = 6; 12 pass that and ordered-triple
// tests for n up to 33 (tests/adversaries/test_adv_permutation.cpp).
//
// The 12 round keys are the words of Philox blocks 0..2 of one StreamId and c comes from block 3, so the
// permutation is a pure function of (n, StreamId). It is a statistical tool, not a cipher: close to, not
// exactly, a uniform random permutation.
#include <cstdint>

#include "kernels/core/hd.hpp"
#include "kernels/core/math.hpp"
#include "kernels/rng/stream.hpp"

namespace dpr::rng {

/// Wellons' "lowbias32" integer hash: a bijection of 32-bit words with full avalanche.
DPR_HD DPR_FORCEINLINE std::uint32_t mix32(std::uint32_t x) {
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

class FeistelPermutation {
  public:
    static constexpr int kRounds = 12;
    static_assert(kRounds % 4 == 0, "round keys are whole Philox blocks");

    /// The bijection of [0, n), n >= 1, keyed by Philox blocks 0..3 of `key`.
    DPR_HD FeistelPermutation(std::uint32_t n, const StreamId& key) : n_(n) {
        const std::uint32_t bits = ceil_log2(n);
        half_bits_ = bits <= 2 ? 1u : (bits + 1) / 2;
        mask_ = (1u << half_bits_) - 1u;
        word_mask_ = static_cast<std::uint32_t>((std::uint64_t{1} << (2 * half_bits_)) - 1u);
        for (std::uint32_t b = 0; b < kRounds / 4; ++b) {
            const U32x4 w = draw_block(key, b);
            for (std::uint32_t i = 0; i < 4; ++i) keys_[4 * b + i] = w.v[i];
        }
        shift_ = draw_block(key, kRounds / 4).v[0] & word_mask_;
    }

    DPR_HD std::uint32_t size() const { return n_; }

    /// pi(x) for x in [0, n).
    DPR_HD std::uint32_t operator()(std::uint32_t x) const {
        do x = encrypt(x);
        while (x >= n_);
        return x;
    }

    /// pi^{-1}(y) for y in [0, n).
    DPR_HD std::uint32_t inverse(std::uint32_t y) const {
        do y = decrypt(y);
        while (y >= n_);
        return y;
    }

  private:
    DPR_HD std::uint32_t round_fn(std::uint32_t r, int i) const { return mix32(r ^ keys_[i]) & mask_; }

    /// One pass over [0, 4^h): the shift by c, then kRounds Feistel rounds (L, R) -> (R, L ^ F(R)).
    DPR_HD std::uint32_t encrypt(std::uint32_t x) const {
        x = (x + shift_) & word_mask_;
        std::uint32_t l = x >> half_bits_;
        std::uint32_t r = x & mask_;
        for (int i = 0; i < kRounds; ++i) {
            const std::uint32_t next = l ^ round_fn(r, i);
            l = r;
            r = next;
        }
        return (l << half_bits_) | r;
    }

    DPR_HD std::uint32_t decrypt(std::uint32_t x) const {
        std::uint32_t l = x >> half_bits_;
        std::uint32_t r = x & mask_;
        for (int i = kRounds - 1; i >= 0; --i) {
            const std::uint32_t prev = r ^ round_fn(l, i);
            r = l;
            l = prev;
        }
        return (((l << half_bits_) | r) - shift_) & word_mask_;
    }

    std::uint32_t n_;
    std::uint32_t half_bits_;
    std::uint32_t mask_;      ///< 2^h - 1
    std::uint32_t word_mask_; ///< 4^h - 1
    std::uint32_t shift_;     ///< c
    std::uint32_t keys_[kRounds];
};

} // namespace dpr::rng
