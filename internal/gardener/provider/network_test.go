package provider

import (
	"errors"
	"net/netip"
	"testing"
)

// TestLayoutsFit checks every layout on every node network it takes, with every number of
// zones: each subnet is canonical and inside nodes, no two overlap, and none is smaller than
// the provider allows (aws /28, azure and alicloud /27 with nodes of /24).
func TestLayoutsFit(t *testing.T) {
	cases := []struct {
		name     string // the layout
		layout   layout // what is checked
		smallest int    // the longest subnet prefix allowed
	}{
		{name: "aws", layout: awsLayout, smallest: 28},
		{name: "azure", layout: azureLayout, smallest: 27},
		{name: "alicloud", layout: alicloudLayout, smallest: 27},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := tc.layout
			for bits := l.shortest; bits <= 24; bits++ {
				nodes := netip.PrefixFrom(netip.MustParseAddr("10.250.0.0"), bits).Masked()
				for n := 1; n <= l.maxZones; n++ {
					slots, err := l.allocate(nodes, nil, n)
					if bits > l.longest(n-1) {
						if !errors.Is(err, ErrNodesTooSmall) {
							t.Errorf("%s, %d zones: error %v, want ErrNodesTooSmall", nodes, n, err)
						}
						continue
					}
					if err != nil || len(slots) != n {
						t.Fatalf("%s, %d zones: %d slots, error %v", nodes, n, len(slots), err)
					}
					var all []netip.Prefix
					for _, s := range slots {
						all = append(all, s...)
					}
					for i, p := range all {
						if p != p.Masked() || !nodes.Contains(p.Addr()) || p.Bits() < nodes.Bits() || p.Bits() > tc.smallest {
							t.Errorf("%s, %d zones: subnet %s is not a canonical subnet of /%d or larger inside nodes", nodes, n, p, tc.smallest)
						}
						last := subnet(p, size(p.Bits())-1, 32)
						if !nodes.Contains(last.Addr()) {
							t.Errorf("%s, %d zones: subnet %s ends outside nodes", nodes, n, p)
						}
						for _, q := range all[i+1:] {
							if p.Overlaps(q) {
								t.Errorf("%s, %d zones: subnets %s and %s overlap", nodes, n, p, q)
							}
						}
					}
				}
			}
		})
	}
}

// TestAllocateSkipsTakenSlots checks that new zones go to the first slots the existing
// subnets leave free, whatever order the existing zones are in.
func TestAllocateSkipsTakenSlots(t *testing.T) {
	nodes := netip.MustParsePrefix("10.250.0.0/16")
	cases := []struct {
		name  string         // what is taken
		taken []netip.Prefix // existing subnets
		n     int            // zones to add
		want  []string       // first subnet of each new slot
	}{
		{name: "nothing taken", n: 2, want: []string{"10.250.0.0/19", "10.250.32.0/19"}},
		{name: "slot 0 taken", taken: pfx("10.250.0.0/19"), n: 1, want: []string{"10.250.32.0/19"}},
		{name: "slot 1 taken", taken: pfx("10.250.32.0/19"), n: 2, want: []string{"10.250.0.0/19", "10.250.64.0/19"}},
		{name: "part of slot 0 taken", taken: pfx("10.250.8.0/24"), n: 1, want: []string{"10.250.32.0/19"}},
		{name: "subnet outside nodes", taken: pfx("192.168.0.0/24"), n: 1, want: []string{"10.250.0.0/19"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			slots, err := azureLayout.allocate(nodes, tc.taken, tc.n)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range slots {
				got = append(got, s[0].String())
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("got %v, want %v", got, tc.want)
				}
			}
		})
	}
}

func pfx(s ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(s))
	for i, v := range s {
		out[i] = netip.MustParsePrefix(v)
	}
	return out
}
