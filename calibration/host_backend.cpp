// The host-thread accelerator backend: APU = a thread pinned to another core, mailbox = two cache lines.
#include <atomic>
#include <chrono>
#include <cstring>
#include <linux/futex.h>
#include <stdexcept>
#include <sys/syscall.h>
#include <thread>
#include <unistd.h>

#include "backend.hpp"
#include "machine.hpp"
#include "spin_wait.hpp"
#include "mmgp/error.hpp"

namespace mmgp::calib {

double apu_backend::timed_get(int, const void*, std::size_t) {
    throw mmgp::failure("backend " + name() + " has no data-transfer path");
}

void futex_wait(std::atomic<std::uint32_t>* addr, std::uint32_t expected) {
    syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(addr), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}
void futex_wake(std::atomic<std::uint32_t>* addr) {
    syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(addr), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}

namespace {

enum op : std::uint32_t { op_offload = 0, op_get = 1, op_stop = 2 };

struct alignas(64) request_line {
    std::atomic<std::uint32_t> seq{0};
    std::uint32_t payload = 0;
    std::uint32_t kind = op_offload;
    const void* src = nullptr;
    std::size_t bytes = 0;
};
struct alignas(64) answer_line {
    std::atomic<std::uint32_t> seq{0};
    std::uint32_t payload = 0;
    double seconds = 0;
};
struct mailbox {
    request_line req;
    answer_line ans;
    std::uint32_t sent = 0;  // host side only: requests sent so far
    char* local = nullptr;   // APU-owned buffer (allocated and first touched by the APU thread)
};

class host_thread_backend final : public apu_backend {
public:
    host_thread_backend(wait_mode m, std::size_t buf) : mode_(m), buf_(buf) {}
    ~host_thread_backend() override { stop(); }
    std::string name() const override { return mode_ == wait_mode::spin ? "host-thread/spin" : "host-thread/futex"; }
    int count() const override { return static_cast<int>(boxes_.size()); }
    std::size_t max_transfer() const override { return buf_; }

    void start(const std::vector<int>& cpus, int count) override {
        stop();
        if (count < 1) throw mmgp::failure("host-thread backend: at least one APU");
        boxes_.clear();
        for (int i = 0; i < count; ++i) boxes_.push_back(std::make_unique<mailbox>());
        int workers = mode_ == wait_mode::spin && !cpus.empty() ? std::min<int>(count, static_cast<int>(cpus.size()))
                                                                 : count;
        std::atomic<int> ready{0};
        for (int w = 0; w < workers; ++w) {
            std::vector<mailbox*> mine;
            for (int i = w; i < count; i += workers) mine.push_back(boxes_[static_cast<std::size_t>(i)].get());
            int cpu = cpus.empty() ? -1 : cpus[static_cast<std::size_t>(w) % cpus.size()];
            threads_.emplace_back([this, mine, cpu, &ready] { worker(mine, cpu, ready); });
        }
        while (ready.load() < workers) std::this_thread::yield();
    }

    void stop() override {
        if (threads_.empty()) return;
        for (auto& b : boxes_) post(*b, op_stop, 0, nullptr, 0);
        for (auto& t : threads_) t.join();
        threads_.clear();
        boxes_.clear();
    }

    void signal(int apu, std::uint32_t payload) override {
        post(*boxes_[static_cast<std::size_t>(apu)], op_offload, payload, nullptr, 0);
    }

    std::uint32_t wait(int apu) override {
        mailbox& b = *boxes_[static_cast<std::size_t>(apu)];
        wait_answer(b);
        return b.ans.payload;
    }

    double timed_get(int apu, const void* src, std::size_t bytes) override {
        if (bytes > buf_) throw mmgp::failure("host-thread backend: transfer larger than the APU buffer");
        mailbox& b = *boxes_[static_cast<std::size_t>(apu)];
        post(b, op_get, 0, src, bytes);
        wait_answer(b);
        return b.ans.seconds;
    }

private:
    void post(mailbox& b, std::uint32_t kind, std::uint32_t payload, const void* src, std::size_t bytes) {
        b.req.payload = payload;
        b.req.kind = kind;
        b.req.src = src;
        b.req.bytes = bytes;
        b.req.seq.store(++b.sent, std::memory_order_release);
        if (mode_ == wait_mode::futex) futex_wake(&b.req.seq);
    }
    void wait_answer(mailbox& b) {
        if (mode_ == wait_mode::spin) {
            while (b.ans.seq.load(std::memory_order_acquire) != b.sent) cpu_relax();
        } else {
            for (std::uint32_t s; (s = b.ans.seq.load(std::memory_order_acquire)) != b.sent;) futex_wait(&b.ans.seq, s);
        }
    }
    // Serves one request; returns false on stop.
    bool serve(mailbox& b, std::uint32_t seq) {
        std::uint32_t kind = b.req.kind;
        if (kind == op_stop) return false;
        if (kind == op_get) {
            auto t0 = std::chrono::steady_clock::now();
            std::memcpy(b.local, b.req.src, b.req.bytes);
            auto t1 = std::chrono::steady_clock::now();
            b.ans.seconds = std::chrono::duration<double>(t1 - t0).count();
        }
        b.ans.payload = b.req.payload + 1;
        b.ans.seq.store(seq, std::memory_order_release);
        if (mode_ == wait_mode::futex) futex_wake(&b.ans.seq);
        return true;
    }
    void worker(std::vector<mailbox*> mine, int cpu, std::atomic<int>& ready) {
        if (cpu >= 0) pin_current_thread(cpu);
        std::vector<std::unique_ptr<char[]>> bufs;
        for (auto* b : mine) {
            bufs.emplace_back(new char[buf_]);
            b->local = bufs.back().get();
            std::memset(b->local, 0, buf_);  // first touch on the APU's core
        }
        std::vector<std::uint32_t> seen(mine.size(), 0);
        ready.fetch_add(1);
        std::size_t live = mine.size();
        while (live > 0) {
            for (std::size_t i = 0; i < mine.size(); ++i) {
                if (!mine[i]) continue;
                std::uint32_t s = mine[i]->req.seq.load(std::memory_order_acquire);
                if (s == seen[i]) {
                    if (mode_ == wait_mode::futex) futex_wait(&mine[i]->req.seq, s);
                    else cpu_relax();
                    continue;
                }
                seen[i] = s;
                if (!serve(*mine[i], s)) {
                    mine[i]->ans.seq.store(s, std::memory_order_release);
                    mine[i] = nullptr;
                    --live;
                }
            }
        }
    }

    wait_mode mode_;
    std::size_t buf_;
    std::vector<std::unique_ptr<mailbox>> boxes_;
    std::vector<std::thread> threads_;
};

}  // namespace

std::unique_ptr<apu_backend> make_host_thread_backend(wait_mode mode, std::size_t transfer_buffer) {
    return std::make_unique<host_thread_backend>(mode, transfer_buffer);
}

}  // namespace mmgp::calib
