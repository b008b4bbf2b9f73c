// Walk-ahead's decisions without a mount: which inodes a walk's reads push (WalkDetector) and the thread
// that pushes them (WalkPush), against a push function that records what it was given.
#include "daemon/walk_push.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace gdfs::daemon {
namespace {

using W = WalkDetector;

TEST(WalkDetector, RandomReadsPushNothing) {
  W d(100000);
  for (uint32_t ino : {500u, 90000u, 17u, 40000u, 123u, 70000u, 69000u})
    EXPECT_TRUE(d.on_first_read(ino).empty()) << "a read that is not a walk's step: " << ino;
}

TEST(WalkDetector, AWalksWindowDoublesAndNeverOverlaps) {
  W d(100000);
  EXPECT_TRUE(d.on_first_read(1000).empty());
  PushWindow w = d.on_first_read(1001);  // the first step
  EXPECT_EQ(w.from, 1002u);
  EXPECT_EQ(w.to, 1002u + W::kFirstStep);
  uint32_t ino = 0, until = w.to - 1, size = W::kFirstStep;
  // The walker finds the pushed files in the kernel; the next read the daemon sees is the first file
  // past the window.
  for (int step = 0; step < 12; ++step) {
    ino = until + 1;
    w = d.on_first_read(ino);
    size = std::min(size * 2, W::kMaxFiles);
    EXPECT_EQ(w.from, ino + 1) << "step " << step;
    EXPECT_EQ(w.to, ino + 1 + size) << "step " << step;
    until = w.to - 1;
  }
  EXPECT_EQ(size, W::kMaxFiles);
}

TEST(WalkDetector, ReadsInsideThePushedWindowExtendItWithoutRepeats) {
  W d(100000);
  std::set<uint32_t> pushed;
  // A walker faster than the pushes: every file reaches the daemon, some slightly out of order (two
  // request threads). No inode is ever asked for twice.
  std::vector<uint32_t> reads;
  for (uint32_t i = 10; i < 400; i += 2) reads.insert(reads.end(), {i + 1, i});
  for (uint32_t ino : reads) {
    const PushWindow w = d.on_first_read(ino);
    for (uint32_t p = w.from; p < w.to; ++p) EXPECT_TRUE(pushed.insert(p).second) << "inode " << p;
  }
  EXPECT_GE(pushed.size(), 390u);
}

TEST(WalkDetector, AJumpAfterARefusedWindowKeepsItsSize) {
  W d(100000);
  d.on_first_read(100);
  PushWindow w = d.on_first_read(101);
  for (int i = 0; i < 4; ++i) w = d.on_first_read(w.to);
  const uint32_t size = w.to - w.from + 1;
  ASSERT_GT(size, W::kFirstStep);
  // The kernel did not know an inode of the latest window (the walk's directory ended there): the next
  // read elsewhere is the walk's next directory.
  d.on_refused(w);
  w = d.on_first_read(5000);
  EXPECT_EQ(w.from, 5001u);
  EXPECT_EQ(w.to, 5001u + size - 1);
  // Without a refusal, a jump starts over.
  EXPECT_TRUE(d.on_first_read(9000).empty());
  // A refusal of an older window says nothing about the latest one.
  const PushWindow old = d.on_first_read(9001);
  ASSERT_EQ(old.to - old.from, W::kFirstStep);
  w = d.on_first_read(old.to);
  d.on_refused(old);
  EXPECT_TRUE(d.on_first_read(20000).empty());
}

TEST(WalkDetector, NeverPastTheLastInode) {
  W d(105);
  d.on_first_read(99);
  PushWindow w = d.on_first_read(100);
  while (!w.empty()) {
    EXPECT_LE(w.to, 106u);
    w = d.on_first_read(w.to);
  }
  EXPECT_TRUE(d.on_first_read(105).empty());
}

TEST(WalkDetector, ADirectoryListedDuringAWalkIsPushedBeforeItsFirstRead) {
  W d(100000);
  EXPECT_TRUE(d.on_listed(500, 20).empty()) << "no walk yet: a listing alone (ls, find) pushes nothing";
  d.on_first_read(100);
  PushWindow w = d.on_first_read(101);  // a walk
  for (int i = 0; i < 3; ++i) w = d.on_first_read(w.to);
  const uint32_t size = w.to - w.from + 1;
  // A small directory: all of it.
  w = d.on_listed(500, 20);
  EXPECT_EQ(w.from, 500u);
  EXPECT_EQ(w.to, 520u);
  // Its walk goes on elsewhere (back in the parent): the window reached the directory's end, so that
  // is the walk's next directory, and keeps the window's size.
  w = d.on_first_read(130);
  EXPECT_EQ(w.from, 131u);
  EXPECT_EQ(w.to - w.from, size - 1);
  // A large directory: the window's size of it; the walker's read past it extends it.
  w = d.on_listed(1000, 5000);
  EXPECT_EQ(w.from, 1000u);
  EXPECT_EQ(w.to, 1000u + size - 1);
  const PushWindow next = d.on_first_read(w.to);
  EXPECT_EQ(next.from, w.to + 1);
  // Never past the last inode.
  W small(1010);
  small.on_first_read(1);
  small.on_first_read(2);
  EXPECT_EQ(small.on_listed(1008, 50).to, 1011u);
}

TEST(WalkPush, PushesWindowsInOrderAndStopsAtARefusal) {
  std::mutex mu;
  std::vector<uint32_t> got;
  WalkPush p(100000, [&](uint32_t ino) {
    std::lock_guard lock(mu);
    got.push_back(ino);
    return ino == 1010 ? PushOutcome::kRefused : PushOutcome::kPushed;
  });
  p.on_first_read(999);
  p.on_first_read(1000);  // the first step: 1001..1004
  p.drain();
  p.on_first_read(1005);  // a step: 1006..1013, refused at 1010
  p.drain();
  std::lock_guard lock(mu);
  EXPECT_EQ(got, (std::vector<uint32_t>{1001, 1002, 1003, 1004, 1006, 1007, 1008, 1009, 1010}));
}

TEST(WalkPush, DrainReturnsWhenTheWindowsLastFileWasReadFirst) {
  std::atomic<int> pushes{0};
  WalkPush p(100000, [&](uint32_t) {
    ++pushes;
    return PushOutcome::kPushed;
  });
  p.on_first_read(999);
  p.on_first_read(1000);  // 1001..1004
  p.drain();
  p.on_first_read(1005);  // 1006..1013
  p.on_first_read(1013);  // a read of the window's last file before the push got there
  p.drain();              // returns: skipping the last inode empties the window too
  EXPECT_GE(pushes.load(), 4);
}

TEST(WalkPush, ARefusalEndsOnlyItsOwnWindow) {
  std::mutex mu;
  std::vector<uint32_t> got;
  WalkPush* self = nullptr;
  WalkPush p(100000, [&](uint32_t ino) {
    if (ino == 1001) {
      // While the kernel refuses 1001, the walker moves to another directory: its window must stay.
      self->on_first_read(5000);
      self->on_first_read(5001);
      return PushOutcome::kRefused;
    }
    std::lock_guard lock(mu);
    got.push_back(ino);
    return PushOutcome::kPushed;
  });
  self = &p;
  p.on_first_read(999);
  p.on_first_read(1000);  // 1001..1004, refused at 1001
  p.drain();
  std::lock_guard lock(mu);
  EXPECT_EQ(got, (std::vector<uint32_t>{5002, 5003, 5004, 5005}));
}

TEST(WalkPush, SkipsFilesTheWalkerReadFirstAndStopsPromptly) {
  std::mutex mu;
  std::vector<uint32_t> got;
  std::atomic<bool> slow{true};
  WalkPush p(100000, [&](uint32_t ino) {
    if (slow) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::lock_guard lock(mu);
    got.push_back(ino);
    return PushOutcome::kPushed;
  });
  p.on_first_read(999);
  p.on_first_read(1000);  // the first step: 1001..1004
  p.on_first_read(1001);  // the walker outran the push: 1002 is read, 1001 being pushed
  p.on_first_read(1002);  // the window grows to 1018
  p.drain();
  size_t before = 0;
  {
    std::lock_guard lock(mu);
    for (uint32_t ino : got)
      EXPECT_TRUE(ino == 1001 || ino > 1002) << "pushed " << ino << " after it was read";
    before = got.size();
  }
  p.on_first_read(1011);  // a step: the window grows to 1043
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  p.stop();  // returns within one push, with most of the window left
  slow = false;
  p.on_first_read(1030);  // ignored once stopped
  std::lock_guard lock(mu);
  EXPECT_GE(got.size(), before + 1);
  EXPECT_LE(got.size(), before + 3);
}

}  // namespace
}  // namespace gdfs::daemon
