// The /dev/gpuoversub client's refusals, which need no module: a device
// that is not there, and a file that is not gpuoversub.ko's device. Its
// calls on the module itself are tested in QEMU (tests/integration/kmod).
#define BOOST_TEST_MODULE kdev
#include <boost/test/unit_test.hpp>

#include <stdexcept>
#include <string>

#include "common/kdev/device.hpp"

namespace {

std::string refusal(const std::string &path)
{
	try {
		gos::kdev::Device dev(path);
	} catch (const std::runtime_error &e) {
		return e.what();
	}
	return "";
}

} // namespace

BOOST_AUTO_TEST_CASE(a_missing_device_asks_whether_the_module_is_loaded)
{
	BOOST_TEST(refusal("/nonexistent/gpuoversub") ==
		   "/nonexistent/gpuoversub: No such file or directory (is gpuoversub.ko loaded?)");
}

BOOST_AUTO_TEST_CASE(another_device_is_not_taken_for_the_module)
{
	BOOST_TEST(refusal("/dev/null") == "/dev/null does not answer the version ioctl: not gpuoversub.ko's device");
}
