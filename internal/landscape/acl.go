package landscape

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
)

// Keys of the ACL ConfigMap, as upstream names them.
const (
	// OperatorCIDRsKey holds a JSON list of the operators' networks.
	OperatorCIDRsKey = "acl-list.json"
	// ControlPlaneNATKey holds the control plane's external NAT address as a JSON string.
	ControlPlaneNATKey = "kcp-external-nat-ip.json"
)

// ParseACL reads the operators' networks and the control plane's NAT address from the ACL
// ConfigMap. Every address must be a CIDR: an access list with a wrong entry would lock out
// whoever it was meant for.
func ParseACL(cm *corev1.ConfigMap) (*gardener.ACL, error) {
	data := field.NewPath("data")
	var errs field.ErrorList
	out := &gardener.ACL{}
	if err := json.Unmarshal([]byte(cm.Data[OperatorCIDRsKey]), &out.OperatorCIDRs); err != nil {
		errs = append(errs, field.Invalid(data.Key(OperatorCIDRsKey), cm.Data[OperatorCIDRsKey], "must be a JSON list of CIDRs"))
	}
	if err := json.Unmarshal([]byte(cm.Data[ControlPlaneNATKey]), &out.ControlPlaneCIDR); err != nil {
		errs = append(errs, field.Invalid(data.Key(ControlPlaneNATKey), cm.Data[ControlPlaneNATKey], "must be a JSON string holding a CIDR"))
	}
	for i, c := range out.OperatorCIDRs {
		if _, _, err := net.ParseCIDR(c); err != nil {
			errs = append(errs, field.Invalid(data.Key(OperatorCIDRsKey).Index(i), c, "must be a CIDR"))
		}
	}
	if _, _, err := net.ParseCIDR(out.ControlPlaneCIDR); len(errs) == 0 && err != nil {
		errs = append(errs, field.Invalid(data.Key(ControlPlaneNATKey), out.ControlPlaneCIDR, "must be a CIDR"))
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("ACL ConfigMap %s/%s: %w", cm.Namespace, cm.Name, errs.ToAggregate())
	}
	return out, nil
}

// ACLFingerprint identifies the addresses of an ACL ConfigMap, for the engine to notice that
// they changed; "" for a nil ConfigMap.
func ACLFingerprint(cm *corev1.ConfigMap) string {
	if cm == nil {
		return ""
	}
	h := sha256.New()
	for _, key := range []string{OperatorCIDRsKey, ControlPlaneNATKey} {
		h.Write([]byte(cm.Data[key]))
		h.Write([]byte{0})
	}
	return "acl:" + hex.EncodeToString(h.Sum(nil))[:16]
}
