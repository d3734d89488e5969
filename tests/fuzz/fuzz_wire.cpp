// libFuzzer target: any bytes as a stream from a peer. The decoders, a
// client's and the daemon's (which refuses daemon-only types at the header),
// must yield frames or one error, never crash or read out of bounds, and
// every frame they yield must pass their own header check and decode cleanly.
#include <cstdint>
#include <cstdlib>

#include "common/proto/wire.hpp"

namespace {

void drain(gos::proto::Decoder &d, bool requests)
{
	while (auto f = d.next()) {
		auto why = requests ? gos::proto::check_request_header(f->hdr) : gos::proto::check_header(f->hdr);
		if (why || f->payload.size() != f->hdr.length || (requests && f->hdr.type >= GOS_WIRE_REPLY))
			std::abort();
		if (f->hdr.type == GOS_WIRE_REPLY)
			(void)gos::proto::decode_reply(*f);
	}
	if (!d.partial())
		d.release();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
	gos::proto::Decoder client, daemon(gos::proto::Decoder::Accepts::requests);
	// Feed in uneven pieces, as a socket would deliver them.
	for (std::size_t off = 0; off < size;) {
		std::size_t n = 1 + (data[off] % 97);
		if (n > size - off)
			n = size - off;
		client.feed(data + off, n);
		daemon.feed(data + off, n);
		off += n;
		drain(client, false);
		drain(daemon, true);
	}
	return 0;
}
