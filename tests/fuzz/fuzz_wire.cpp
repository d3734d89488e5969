// libFuzzer target: any bytes as a stream from a peer. The decoder must
// yield frames or one error, never crash or read out of bounds, and every
// frame it yields must pass its own header check and decode cleanly.
#include <cstdint>
#include <cstdlib>

#include "common/proto/wire.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
	gos::proto::Decoder d;
	// Feed in uneven pieces, as a socket would deliver them.
	for (std::size_t off = 0; off < size;) {
		std::size_t n = 1 + (data[off] % 97);
		if (n > size - off)
			n = size - off;
		d.feed(data + off, n);
		off += n;
		while (auto f = d.next()) {
			if (gos::proto::check_header(f->hdr) || f->payload.size() != f->hdr.length)
				std::abort();
			if (f->hdr.type == GOS_WIRE_REPLY)
				(void)gos::proto::decode_reply(*f);
		}
	}
	return 0;
}
