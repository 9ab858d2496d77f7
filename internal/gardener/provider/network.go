package provider

import (
	"encoding/binary"
	"fmt"
	"net/netip"
)

// parseNodes parses spec.shoot.networking.nodes, which must be a canonical IPv4 CIDR.
func parseNodes(s string) (netip.Prefix, error) {
	nodes, err := netip.ParsePrefix(s)
	if err != nil || !nodes.Addr().Is4() {
		return netip.Prefix{}, fmt.Errorf("%w: spec.shoot.networking.nodes %q is not an IPv4 CIDR such as 10.250.0.0/16", ErrInvalidNodes, s)
	}
	if nodes != nodes.Masked() {
		return netip.Prefix{}, fmt.Errorf("%w: spec.shoot.networking.nodes %q has host bits set; the network is %s", ErrInvalidNodes, s, nodes.Masked())
	}
	return nodes, nil
}

// layout places per-zone subnets in the node network: slot i holds the subnets of the i-th
// zone of a new shoot.
type layout struct {
	// provider is the provider type, for messages.
	provider string
	// maxZones is the number of slots.
	maxZones int
	// shortest is the shortest node prefix (the largest network) the provider takes.
	shortest int
	// longest returns the longest node prefix (the smallest network) that leaves room for
	// slot i's subnets.
	longest func(i int) int
	// slot returns slot i's subnets in nodes; nodes is at most longest(i) bits long.
	slot func(nodes netip.Prefix, i int) []netip.Prefix
}

// parseNodes parses nodes and checks that the provider takes a network that large; whether
// the zones' subnets fit is up to zoneEntries.
func (l layout) parseNodes(s string) (netip.Prefix, error) {
	nodes, err := parseNodes(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	if nodes.Bits() < l.shortest {
		return netip.Prefix{}, fmt.Errorf("%w: spec.shoot.networking.nodes %s is larger than %s takes: it needs a prefix of /%d or longer",
			ErrInvalidNodes, nodes, l.provider, l.shortest)
	}
	return nodes, nil
}

// allocate returns the subnets of n more zones: the first n slots that overlap none of the
// subnets taken already. With nothing taken, these are slots 0 to n-1.
func (l layout) allocate(nodes netip.Prefix, taken []netip.Prefix, n int) ([][]netip.Prefix, error) {
	used := append([]netip.Prefix(nil), taken...)
	out := make([][]netip.Prefix, 0, n)
	for i := 0; i < l.maxZones && len(out) < n; i++ {
		if nodes.Bits() > l.longest(i) {
			return nil, l.tooSmall(nodes, i+1)
		}
		subnets := l.slot(nodes, i)
		if overlapsAny(subnets, used) {
			continue
		}
		out = append(out, subnets)
		used = append(used, subnets...)
	}
	if len(out) < n {
		return nil, fmt.Errorf("%w: spec.shoot.networking.nodes %s has no free room left for %d more %s zone subnets",
			ErrNodesTooSmall, nodes, n-len(out), l.provider)
	}
	return out, nil
}

// zoneEntries returns an entry for each of names, made by entry from the zone's subnets in
// the free slots of nodes; existing is the number of zones the config has already.
func zoneEntries[Z any](l layout, nodes netip.Prefix, existing int, taken []netip.Prefix, names []string,
	entry func(name string, subnets []netip.Prefix) (Z, error),
) ([]Z, error) {
	total := existing + len(names)
	if total > l.maxZones {
		return nil, fmt.Errorf("%w: %s takes at most %d zones, got %d", ErrTooManyZones, l.provider, l.maxZones, total)
	}
	if nodes.Bits() > l.longest(total-1) {
		return nil, l.tooSmall(nodes, total)
	}
	slots, err := l.allocate(nodes, taken, len(names))
	if err != nil {
		return nil, err
	}
	out := make([]Z, len(names))
	for i, name := range names {
		if out[i], err = entry(name, slots[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// extend returns the existing infrastructureConfig raw with entries for zones appended:
// existing is its number of zones and subnets are their CIDRs, which the new zones' subnets
// stay clear of.
func extend[Z any](l layout, in Input, raw []byte, existing int, subnets []string, zones []string,
	entry func(name string, subnets []netip.Prefix) (Z, error),
) ([]byte, error) {
	nodes, err := l.parseNodes(in.Nodes)
	if err != nil {
		return nil, err
	}
	taken, err := cidrs(l.provider, subnets...)
	if err != nil {
		return nil, err
	}
	entries, err := zoneEntries(l, nodes, existing, taken, zones, entry)
	if err != nil {
		return nil, err
	}
	all := make([]any, len(entries))
	for i, e := range entries {
		all[i] = e
	}
	return appendZones(l.provider, raw, all)
}

// tooSmall is the error for a node network without room for the subnets of zones zones (0:
// for any subnet at all).
func (l layout) tooSmall(nodes netip.Prefix, zones int) error {
	if zones == 0 {
		return fmt.Errorf("%w: spec.shoot.networking.nodes %s is too small for %s: it needs a prefix of /%d or shorter",
			ErrNodesTooSmall, nodes, l.provider, l.longest(0))
	}
	need := l.longest(min(zones, l.maxZones) - 1)
	return fmt.Errorf("%w: spec.shoot.networking.nodes %s is too small for %d %s zones: it needs a prefix of /%d or shorter",
		ErrNodesTooSmall, nodes, zones, l.provider, need)
}

// subnet returns the bits-long prefix that starts offset addresses into nodes.
func subnet(nodes netip.Prefix, offset uint32, bits int) netip.Prefix {
	a := nodes.Addr().As4()
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], binary.BigEndian.Uint32(a[:])+offset)
	return netip.PrefixFrom(netip.AddrFrom4(b), bits)
}

// size is the number of addresses of an IPv4 prefix of the given length.
func size(bits int) uint32 {
	return 1 << (32 - bits)
}

// evenSlots is the layout of azure and alicloud: eight equal subnets of nodes, one per zone
// (/16 gives /19s: 10.250.0.0/19, 10.250.32.0/19, ...), on node networks from /16 to /24.
func evenSlots(provider string) layout {
	return layout{
		provider: provider,
		maxZones: 8,
		shortest: 16,
		longest:  func(int) int { return 24 },
		slot: func(nodes netip.Prefix, i int) []netip.Prefix {
			bits := nodes.Bits() + 3
			return []netip.Prefix{subnet(nodes, uint32(i)*size(bits), bits)}
		},
	}
}

// overlapsAny reports whether a subnet of a overlaps a subnet of b.
func overlapsAny(a, b []netip.Prefix) bool {
	for _, x := range a {
		for _, y := range b {
			if x.Overlaps(y) {
				return true
			}
		}
	}
	return false
}

// nonEmptyZone rejects an empty zone name.
func nonEmptyZone(provider string) func(string) (string, error) {
	return func(name string) (string, error) {
		if name == "" {
			return "", fmt.Errorf("%w: %s zone name is empty", ErrInvalidZone, provider)
		}
		return name, nil
	}
}

// cidrs parses the non-empty CIDRs an existing config holds.
func cidrs(provider string, values ...string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, v := range values {
		if v == "" {
			continue
		}
		p, err := netip.ParsePrefix(v)
		if err != nil {
			return nil, malformed(provider, fmt.Errorf("zone subnet %q is not a CIDR", v))
		}
		out = append(out, p.Masked())
	}
	return out, nil
}
