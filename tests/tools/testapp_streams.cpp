// gos_testapp's commands for streams, memory pools, CUDA IPC and stream
// capture, as frameworks use them:
//   stream S                  -> ok: a stream named S
//   pause S | resume S        -> ok | err CODE: S's work stays pending (fake driver only)
//   pool NAME MIB S [ipc]     -> ok | err CODE: a block of an explicit pool (made for
//                                CUDA IPC with ipc) allocated on S, filled
//   freeon NAME S             -> ok | err CODE: cuMemFreeAsync on S
//   ipc NAME                  -> ok HEX | err CODE: cuIpcGetMemHandle of NAME
//   import NAME MIB HEX       -> ok | err CODE: another process's export of NAME, as NAME
//   capture begin|end S       -> ok | err CODE: global-mode stream capture on S
#include <cstdio>

#include "testapp.hpp"

namespace {

std::map<std::string, CUstream> streams;

std::string answer(CUresult r) { return r == CUDA_SUCCESS ? "ok" : "err " + std::to_string(r); }

CUmemoryPool pool(bool ipc)
{
	static CUmemoryPool pools[2];
	if (!pools[ipc]) {
		CUmemPoolProps props{};
		props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
		props.location = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
		props.handleTypes = ipc ? CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR : CU_MEM_HANDLE_TYPE_NONE;
		if (cuMemPoolCreate(&pools[ipc], &props) != CUDA_SUCCESS)
			pools[ipc] = nullptr;
	}
	return pools[ipc];
}

std::string hex(const CUipcMemHandle &h)
{
	std::string out;
	char two[3];
	for (unsigned char c : h.reserved) {
		std::snprintf(two, sizeof two, "%02x", c);
		out += two;
	}
	return out;
}

bool unhex(const std::string &text, CUipcMemHandle &h)
{
	if (text.size() != 2 * sizeof h.reserved)
		return false;
	for (std::size_t i = 0; i < sizeof h.reserved; i++)
		h.reserved[i] = static_cast<char>(std::stoul(text.substr(2 * i, 2), nullptr, 16));
	return true;
}

CUresult filled(Buf &b, const std::string &name)
{
	auto p = pattern(name, b.size);
	return cuMemcpyHtoD(b.ptr, p.data(), p.size() * 4);
}

} // namespace

CUresult stream_free(const Buf &b)
{
	return b.how == "import" ? cuIpcCloseMemHandle(b.ptr) : cuMemFreeAsync(b.ptr, nullptr);
}

bool stream_command(const std::string &cmd, const std::string &name, std::istringstream &in,
		    std::map<std::string, Buf> &bufs, std::string &reply)
{
	std::string arg, extra;
	if (cmd == "stream") {
		CUstream s{};
		CUresult r = cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
		if (!r)
			streams[name] = s;
		reply = answer(r);
	} else if ((cmd == "pause" || cmd == "resume") && streams.count(name)) {
		auto set = optional_symbol<int (*)(CUstream, int)>("fakecuda_stream_pause");
		reply = set ? answer(static_cast<CUresult>(set(streams[name], cmd == "pause"))) : "err -38";
	} else if (cmd == "pool" && (in >> arg >> extra) && streams.count(extra)) {
		Buf b;
		b.size = std::stoul(arg) << 20;
		b.how = "pool";
		std::string kind;
		in >> kind;
		CUresult r = cuMemAllocFromPoolAsync(&b.ptr, b.size, pool(kind == "ipc"), streams[extra]);
		if (!r)
			r = filled(b, name);
		if (!r)
			bufs[name] = b;
		reply = answer(r);
	} else if (cmd == "freeon" && bufs.count(name) && (in >> arg) && streams.count(arg)) {
		CUresult r = cuMemFreeAsync(bufs[name].ptr, streams[arg]);
		if (!r)
			bufs.erase(name);
		reply = answer(r);
	} else if (cmd == "ipc" && bufs.count(name)) {
		CUipcMemHandle h{};
		CUresult r = cuIpcGetMemHandle(&h, bufs[name].ptr);
		reply = r ? answer(r) : "ok " + hex(h);
	} else if (cmd == "import" && (in >> arg >> extra)) {
		CUipcMemHandle h{};
		Buf b;
		b.size = std::stoul(arg) << 20;
		b.how = "import";
		CUresult r = unhex(extra, h) ? cuIpcOpenMemHandle(&b.ptr, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS)
					     : CUDA_ERROR_INVALID_VALUE;
		if (!r)
			bufs[name] = b;
		reply = answer(r);
	} else if (cmd == "capture" && (in >> arg) && streams.count(arg)) {
		CUgraph g{};
		CUresult r = name == "begin" ? cuStreamBeginCapture(streams[arg], CU_STREAM_CAPTURE_MODE_GLOBAL)
			     : name == "end"  ? cuStreamEndCapture(streams[arg], &g)
					      : CUDA_ERROR_INVALID_VALUE;
		if (g)
			cuGraphDestroy(g);
		reply = answer(r);
	} else {
		return false;
	}
	return true;
}
