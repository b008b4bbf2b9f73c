// How a mounted gdfs hands out its reader's counters (one JSON object, README "Counters"): the root
// directory answers the xattr kStatsXattr and the ioctl kStatsIoctl. The xattr is what a shell reaches
// (getfattr); the ioctl also works on a mount whose xattrs are off (gdfs -o xattr=), where the kernel
// no longer asks the daemon for any xattr. gdfs-inspect counters uses the ioctl first.
#pragma once
#include <sys/ioctl.h>

#include <cstddef>

namespace gdfs {

// Not listed by listxattr, so that archivers and tree comparisons see exactly the image's own xattrs.
inline constexpr const char* kStatsXattr = "user.gdfs.stats";

// A FUSE ioctl is restricted to sizes encoded in its number: the caller gives a buffer of
// kStatsIoctlBytes, and the ioctl returns the JSON's length.
inline constexpr size_t kStatsIoctlBytes = 8192;
inline constexpr unsigned long kStatsIoctl = _IOR('G', 1, char[kStatsIoctlBytes]);

}  // namespace gdfs
