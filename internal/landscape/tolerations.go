package landscape

import (
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/apimachinery/pkg/api/equality"
)

// AllTolerations returns every toleration the landscape gives shoots, in any region, each once
// and in a stable order. The Gardener project must allow them (its spec.tolerations.whitelist):
// Gardener's ShootTolerationRestriction refuses a shoot toleration its project does not allow.
func (l *Landscape) AllTolerations() []gardencorev1beta1.Toleration {
	var out []gardencorev1beta1.Toleration
	for _, region := range sortedKeys(l.Config.Converter.Tolerations) {
		for _, tol := range l.Config.Converter.Tolerations[region] {
			seen := false
			for _, o := range out {
				seen = seen || equality.Semantic.DeepEqual(o, tol)
			}
			if !seen {
				out = append(out, tol)
			}
		}
	}
	return out
}
