// Many nodes' job-wide parts at once, for the benchmark (bench_jobwide.sh):
//   gos_jobwide_nodes HOST PORT MUNGE JOB RUN START WRITER [--silent PCT] [--for S] <NODES
// NODES gives "NAME ADDR" per simulated node. Each node's part is sealed
// with munged (as whoever runs this; root for the door to keep it), then
// all are sent at once on one event loop with the daemon's own send_frame,
// each from its node's ADDR, to the door at HOST:PORT. A `busy` (a full
// door, no connection, no answer) is tried again after the real sender's
// backoff: 1 s doubling to 60 s, drawn from its upper half, for at most S
// seconds (60). --silent PCT leaves that share of the nodes unsent, spread
// over the list. Prints
//   sealed N in T s; taken K refused R given_up G silent Q; last taken T s
// (times from the start of the sending), then, with silent nodes,
//   silent NAME...
// and each refusal's reason on stderr. Exit 0 when every node sent was taken.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "daemon/gpud/jobwide_sender.hpp"
#include "tests/tools/jobwide_tool.hpp"

using namespace gos;
using gos::jobwide_tool::fail;
using gos::jobwide_tool::frame_of;
using gos::jobwide_tool::number;
using Clock = std::chrono::steady_clock;

namespace {

constexpr auto backoff_min = std::chrono::milliseconds(1000), backoff_max = std::chrono::milliseconds(60000);

// Node I's part: eight GPUs, and counters that differ from node to node,
// so that the record's spreads and top list have something to order.
std::string part_of(const std::string &name, std::uint32_t run, std::size_t i)
{
	std::string gpus;
	for (int g = 0; g < 8; ++g) {
		char bus[32];
		std::snprintf(bus, sizeof bus, "%s\"0000:%02x:00.0\"", g ? "," : "", 0x17 + g);
		gpus += bus;
	}
	const unsigned long long evicted = (i * 7919) % 100003, peak = 1000000 + i;
	return "{\"node\":\"" + name + "\",\"run\":" + std::to_string(run) + ",\"gpus\":[" + gpus +
	       "],\"peak_dev\":" + std::to_string(peak) + ",\"peak_host\":0,\"evicted\":" + std::to_string(evicted) +
	       ",\"returned\":" + std::to_string(evicted) + ",\"oversub_s\":1,\"p99_us\":" + std::to_string(9 + i % 50) +
	       ",\"end\":\"\"}";
}

struct Node {
	std::string name, addr, frame;
	std::chrono::milliseconds backoff{0};
};

struct Fanin {
	boost::asio::io_context io;
	boost::asio::thread_pool workers{4};	// opening the sealed answers
	std::string host, munge_socket;
	jobwide::Payload run;	// job and start
	std::uint16_t port = 0;
	Clock::time_point start, deadline, last_taken;
	std::mt19937 random{std::random_device{}()};
	std::size_t taken = 0, refused = 0, given_up = 0;

	void send(std::shared_ptr<Node> n)
	{
		gpud::SendTo to{host, port, n->addr, std::chrono::milliseconds(10000)};
		jobwide::Payload part = run;
		part.node = n->name;
		gpud::send_frame(io, to, n->frame, jobwide_tool::believe(workers, munge_socket, part),
				 [this, n](gpud::Heard heard, const std::string &why) {
			if (heard == gpud::Heard::taken) {
				++taken;
				last_taken = Clock::now();
			} else if (heard == gpud::Heard::refused) {
				++refused;
				std::fprintf(stderr, "%s refused: %s\n", n->name.c_str(), why.c_str());
			} else {
				again(n);
			}
		});
	}

	// The real sender's backoff (jobwide_outbox.cpp): doubled, drawn from
	// its upper half, so that the busy ones do not all come back at once.
	void again(std::shared_ptr<Node> n)
	{
		n->backoff = n->backoff.count() ? std::min(n->backoff * 2, backoff_max) : backoff_min;
		auto drawn = std::chrono::duration_cast<Clock::duration>(
			n->backoff * (0.5 + 0.5 * std::uniform_real_distribution<double>(0, 1)(random)));
		if (Clock::now() + drawn > deadline) {
			++given_up;
			return;
		}
		auto timer = std::make_shared<boost::asio::steady_timer>(io, drawn);
		timer->async_wait([this, n, timer](const boost::system::error_code &) { send(n); });
	}
};

double seconds(Clock::duration d)
{
	return std::chrono::duration<double>(d).count();
}

} // namespace

int main(int argc, char **argv)
{
	if (argc < 8) {
		std::fprintf(stderr, "usage: gos_jobwide_nodes HOST PORT MUNGE JOB RUN START WRITER [--silent PCT] [--for S] <NODES\n");
		return 2;
	}
	unsigned silent_pct = 0, for_s = 60;
	for (int i = 8; i < argc; i += 2) {
		if (i + 1 >= argc)
			fail(std::string("no value for ") + argv[i]);
		if (std::strcmp(argv[i], "--silent") == 0)
			silent_pct = static_cast<unsigned>(std::min<std::uint64_t>(number(argv[i + 1]), 100));
		else if (std::strcmp(argv[i], "--for") == 0)
			for_s = static_cast<unsigned>(number(argv[i + 1]));
		else
			fail(std::string("unknown option ") + argv[i]);
	}
	jobwide::Payload p;
	p.job = static_cast<std::uint32_t>(number(argv[4]));
	p.run = static_cast<std::uint32_t>(number(argv[5]));
	p.start = static_cast<std::int64_t>(number(argv[6]));
	p.writers = {argv[7]};

	auto sealing = Clock::now();
	std::vector<std::shared_ptr<Node>> nodes;
	std::vector<std::string> silent;
	std::size_t i = 0;
	for (std::string name, addr; std::cin >> name >> addr; ++i) {
		// Node I is silent when its share crosses a whole percent step.
		if ((i + 1) * silent_pct / 100 != i * silent_pct / 100) {
			silent.push_back(name);
			continue;
		}
		p.node = name;
		p.part = part_of(name, p.run, i);
		nodes.push_back(std::make_shared<Node>(Node{name, addr, frame_of(argv[3], p)}));
	}
	const double sealed_s = seconds(Clock::now() - sealing);

	Fanin f;
	f.host = argv[1];
	f.munge_socket = argv[3];
	f.run = p;
	f.port = static_cast<std::uint16_t>(number(argv[2]));
	f.start = f.last_taken = Clock::now();
	f.deadline = f.start + std::chrono::seconds(for_s);
	for (auto &n : nodes)
		f.send(n);
	f.io.run();
	std::printf("sealed %zu in %.2f s; taken %zu refused %zu given_up %zu silent %zu; last taken %.2f s\n",
		    nodes.size(), sealed_s, f.taken, f.refused, f.given_up, silent.size(), seconds(f.last_taken - f.start));
	if (!silent.empty()) {
		std::printf("silent");
		for (const std::string &name : silent)
			std::printf(" %s", name.c_str());
		std::printf("\n");
	}
	return f.taken == nodes.size() ? 0 : 1;
}
