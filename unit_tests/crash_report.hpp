#pragma once
// Signal handlers that print where a test crashed (crash_report.cpp).

namespace ozaki_test {
void install_crash_report();
}  // namespace ozaki_test
