// The tools' shared text helpers: names made safe to print.
#include <gtest/gtest.h>

#include "text.h"

namespace gdfs::text {
namespace {

TEST(Printable, ControlBytesAndInvalidUtf8AreEscapedValidUtf8Stays) {
  EXPECT_EQ(printable("plain name.txt"), "plain name.txt");
  EXPECT_EQ(printable("new\nline\x1b[2J\x7f"), "new\\x0aline\\x1b[2J\\x7f");
  EXPECT_EQ(printable("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x93\x81"),
            "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x93\x81");
  EXPECT_EQ(printable("bad\xff\xfename"), "bad\\xff\\xfename");
  EXPECT_EQ(printable("\xc2\x9b"
                      "31m"),
            "\\xc2\\x9b31m");                                        // C1 CSI: a terminal escape
  EXPECT_EQ(printable("\xc0\xaf"), "\\xc0\\xaf");                    // overlong '/'
  EXPECT_EQ(printable("\xe0\x80\xaf"), "\\xe0\\x80\\xaf");           // overlong, three bytes
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");           // a UTF-16 surrogate
  EXPECT_EQ(printable("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
  EXPECT_EQ(printable("cut \xe2\x82"), "cut \\xe2\\x82");            // a character cut short
  EXPECT_EQ(printable("\x80stray"), "\\x80stray");                   // a lone continuation byte
  EXPECT_EQ(printable(std::string_view("nul\0byte", 8)), "nul\\x00byte");
}

}  // namespace
}  // namespace gdfs::text
