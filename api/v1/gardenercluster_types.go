package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LabelRuntimeName names, on the GardenerCluster and the kubeconfig Secret this manager writes,
// and on the objects it writes to the garden, the Runtime they belong to.
const LabelRuntimeName = "infrastructuremanager.kyma-project.io/runtime-name"

// GardenerCluster keeps the admin kubeconfig of one runtime's shoot in a Secret and rotates it
// before it expires.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=gc
// +kubebuilder:printcolumn:name="Shoot",type=string,JSONPath=`.spec.shoot.name`
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.state`
// +kubebuilder:printcolumn:name="Step",type=string,JSONPath=`.status.step.name`
// +kubebuilder:printcolumn:name="Attempt",type=integer,JSONPath=`.status.retry.attempt`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type GardenerCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   GardenerClusterSpec   `json:"spec"`
	Status GardenerClusterStatus `json:"status,omitempty"`
}

// GardenerClusterList is a list of GardenerClusters.
//
// +kubebuilder:object:root=true
type GardenerClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []GardenerCluster `json:"items"`
}

// GardenerClusterSpec names the shoot and the Secret its kubeconfig goes to.
type GardenerClusterSpec struct {
	// Kubeconfig says where the kubeconfig is stored.
	Kubeconfig Kubeconfig `json:"kubeconfig"`

	// Shoot whose admin kubeconfig is kept.
	Shoot Shoot `json:"shoot"`
}

// Shoot names a Gardener shoot.
type Shoot struct {
	// Name of the shoot.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=21
	Name string `json:"name"`
}

// Kubeconfig says where a kubeconfig is stored.
type Kubeconfig struct {
	// Secret the kubeconfig is stored in.
	Secret SecretKeyRef `json:"secret"`
}

// SecretKeyRef names one key of a Secret.
type SecretKeyRef struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Namespace of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace"`

	// Key of the kubeconfig in the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Key string `json:"key"`
}

// GardenerClusterStatus is what the manager observed and did.
type GardenerClusterStatus struct {
	EngineStatus `json:",inline"`

	// KubeconfigExpiresAt is when the stored kubeconfig expires.
	// +optional
	KubeconfigExpiresAt *metav1.Time `json:"kubeconfigExpiresAt,omitempty"`

	// KubeconfigRotatedAt is when the stored kubeconfig was last replaced.
	// +optional
	KubeconfigRotatedAt *metav1.Time `json:"kubeconfigRotatedAt,omitempty"`
}
