package admission

import (
	"fmt"
	"net"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// cidr is a network and the field it came from, with the checks Gardener's
// pkg/utils/validation/cidr makes. A nil *cidr (a field that is unset) takes
// part in no check.
type cidr struct {
	value string
	path  *field.Path
	net   *net.IPNet
	err   error
}

func newCIDR(value string, path *field.Path) *cidr {
	_, n, err := net.ParseCIDR(value)
	return &cidr{value: value, path: path, net: n, err: err}
}

// optionalCIDR is newCIDR for a field that may be unset.
func optionalCIDR(value *string, path *field.Path) *cidr {
	if value == nil {
		return nil
	}
	return newCIDR(*value, path)
}

func (c *cidr) ok() bool { return c != nil && c.err == nil }

// last is the last address of the network.
func (c *cidr) last() net.IP {
	out := make(net.IP, len(c.net.IP))
	for i := range c.net.IP {
		out[i] = c.net.IP[i] | ^c.net.Mask[i]
	}
	return out
}

// subset wants every other network inside c.
func (c *cidr) subset(others ...*cidr) field.ErrorList {
	var errs field.ErrorList
	if !c.ok() {
		return errs
	}
	for _, o := range others {
		if !o.ok() || o == c {
			continue
		}
		if !c.net.Contains(o.net.IP) || !c.net.Contains(o.last()) {
			errs = append(errs, field.Invalid(o.path, o.value, fmt.Sprintf("must be a subset of %q (%q)", c.path.String(), c.value)))
		}
	}
	return errs
}

// notOverlap wants no other network to overlap c.
func (c *cidr) notOverlap(others ...*cidr) field.ErrorList {
	var errs field.ErrorList
	if !c.ok() {
		return errs
	}
	for _, o := range others {
		if !o.ok() || o == c {
			continue
		}
		if c.net.Contains(o.net.IP) || o.net.Contains(c.net.IP) {
			errs = append(errs, field.Invalid(o.path, o.value, fmt.Sprintf("must not overlap with %q (%q)", c.path.String(), c.value)))
		}
	}
	return errs
}

// parse reports networks that do not parse.
func parse(cs ...*cidr) field.ErrorList {
	var errs field.ErrorList
	for _, c := range cs {
		if c != nil && c.err != nil {
			errs = append(errs, field.Invalid(c.path, c.value, c.err.Error()))
		}
	}
	return errs
}

// disjoint wants the networks pairwise disjoint.
func disjoint(cs []*cidr) field.ErrorList {
	var errs field.ErrorList
	for i := 0; i < len(cs)-1; i++ {
		if cs[i] != nil {
			errs = append(errs, cs[i].notOverlap(cs[i+1:]...)...)
		}
	}
	return errs
}

// canonical wants a network written as its own base address.
func canonical(path *field.Path, value string) field.ErrorList {
	if value == "" {
		return nil
	}
	ip, n, _ := net.ParseCIDR(value)
	if n != nil && !n.IP.Equal(ip) {
		return field.ErrorList{field.Invalid(path, value, "must be valid canonical CIDR")}
	}
	return nil
}

// shouldEnforceImmutability mirrors Gardener's function of that name: a
// pool's zones are immutable unless zones are only appended.
func shouldEnforceImmutability(zones, old []string) bool {
	delta := len(zones) - len(old)
	if delta > 0 {
		head := zones[:len(old)]
		if slices.Equal(head, old) {
			return false
		}
		return shouldEnforceImmutability(head, old)
	}
	return true
}
