#include "registry.hpp"

#include <algorithm>

namespace gos::agent {

void Registry::add(const BufferRef &b)
{
	std::lock_guard g(mu_);
	(b->backing == Backing::vmm || b->backing == Backing::context ? *by_handle_ : *by_ptr_)[b->base] = b;
	if (b->engine_id)
		(*by_id_)[b->engine_id] = b;
}

BufferRef Registry::take(std::uint64_t base, bool vmm)
{
	std::lock_guard g(mu_);
	auto &map = vmm ? *by_handle_ : *by_ptr_;
	auto it = map.find(base);
	if (it == map.end())
		return nullptr;
	BufferRef b = it->second;
	map.erase(it);
	if (b->engine_id)
		by_id_->erase(b->engine_id);
	return b;
}

BufferRef Registry::find(std::uint64_t base, bool vmm) const
{
	std::lock_guard g(mu_);
	const auto &map = vmm ? *by_handle_ : *by_ptr_;
	auto it = map.find(base);
	return it == map.end() ? nullptr : it->second;
}

BufferRef Registry::containing(std::uint64_t ptr) const
{
	std::lock_guard g(mu_);
	auto it = by_ptr_->upper_bound(ptr);
	if (it == by_ptr_->begin())
		return nullptr;
	--it;
	return ptr < it->first + it->second->size ? it->second : nullptr;
}

BufferRef Registry::by_id(std::uint64_t id) const
{
	std::lock_guard g(mu_);
	auto it = by_id_->find(id);
	return it == by_id_->end() ? nullptr : it->second;
}

std::optional<gos_wire_order> Registry::set_id(const BufferRef &b, std::uint64_t id)
{
	std::lock_guard g(mu_);
	if (b->engine_id)
		by_id_->erase(b->engine_id);
	b->engine_id = id;
	if (!id)
		return std::nullopt;
	(*by_id_)[id] = b;
	auto it = std::find_if(early_.begin(), early_.end(), [id](const gos_wire_order &o) { return o.buffer == id; });
	if (it == early_.end())
		return std::nullopt;
	gos_wire_order settled = *it;
	early_.erase(it);
	return settled;
}

BufferRef Registry::settled_buffer(const gos_wire_order &settled)
{
	std::lock_guard g(mu_);
	auto it = by_id_->find(settled.buffer);
	if (it != by_id_->end())
		return it->second;
	if (early_.size() == early_max)
		early_.pop_front();
	early_.push_back(settled);
	return nullptr;
}

std::vector<BufferRef> Registry::all() const
{
	std::lock_guard g(mu_);
	std::vector<BufferRef> out;
	for (auto *map : {by_handle_, by_ptr_})
		for (const auto &[base, b] : *map)
			out.push_back(b);
	return out;
}

std::vector<BufferRef> Registry::unregistered() const
{
	std::vector<BufferRef> out;
	for (auto &b : all())
		if (!b->engine_id)
			out.push_back(b);
	return out;
}

std::vector<bool> Registry::gpus_in_use(std::uint32_t ngpus) const
{
	std::vector<bool> used(ngpus, false);
	std::lock_guard g(mu_);
	for (const auto &[id, b] : *by_id_)
		if (static_cast<std::uint32_t>(b->dev) < ngpus)
			used[static_cast<std::size_t>(b->dev)] = true;
	return used;
}

void Registry::forget_ids()
{
	std::lock_guard g(mu_);
	for (auto &[id, b] : *by_id_)
		b->engine_id = 0;
	by_id_->clear();
	early_.clear();
}

void Registry::fork_child()
{
	// The old maps are leaked on purpose: their buffers' mutexes may be
	// held by parent threads that do not exist here, and destroying a held
	// mutex is undefined.
	by_ptr_ = new std::map<std::uint64_t, BufferRef>;
	by_handle_ = new std::map<std::uint64_t, BufferRef>;
	by_id_ = new std::map<std::uint64_t, BufferRef>;
	early_.clear();
	mu_.unlock();
}

} // namespace gos::agent
