// Package v1 is the API of the FSM engine (package fsm): the part of an object's status the
// engine owns (EngineStatus, with its step and retry records), the coarse lifecycle State, the
// Ready condition and the reasons of a Failed object. A CRD embeds EngineStatus inline in its
// status and returns it from its EngineStatus method, which makes it an fsm.Object. The package
// depends on the Kubernetes meta API alone, so a client reads the status without the engine, and
// its types follow the compatibility rules of the CRDs that embed them.
//
// +kubebuilder:object:generate=true
package v1
