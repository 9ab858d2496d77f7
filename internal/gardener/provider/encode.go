package provider

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
)

// errNotObject is the decoding error of a config that is not a JSON object.
var errNotObject = errors.New("not a JSON object")

// encode returns v as JSON. encoding/json writes struct fields in declaration order and map
// keys sorted, so the same value always gives the same bytes.
func encode(v any) (*runtime.RawExtension, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode provider config: %w", err)
	}
	return &runtime.RawExtension{Raw: raw}, nil
}

// decode reads an existing infrastructureConfig into v, the provider's type. Unknown fields
// are allowed (the extension may be newer than its API module here); anything else that does
// not fit v is ErrMalformedExisting.
func decode(provider string, raw []byte, v any) error {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return malformed(provider, errNotObject)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return malformed(provider, err)
	}
	return nil
}

// appendZones returns the infrastructureConfig raw with entries appended to networks.zones.
// It edits the JSON rather than re-encoding a decoded value: every other field and every
// existing zone keeps its value, including fields the provider's Go type does not know.
// Objects come out with their keys sorted.
func appendZones(provider string, raw []byte, entries []any) ([]byte, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil || top == nil {
		return nil, malformed(provider, errNotObject)
	}
	var networks map[string]json.RawMessage
	if err := json.Unmarshal(orNull(top["networks"]), &networks); err != nil {
		return nil, malformed(provider, fmt.Errorf("networks: %w", err))
	}
	if networks == nil {
		networks = map[string]json.RawMessage{}
	}
	var zones []json.RawMessage
	if err := json.Unmarshal(orNull(networks["zones"]), &zones); err != nil {
		return nil, malformed(provider, fmt.Errorf("networks.zones: %w", err))
	}
	for _, e := range entries {
		b, err := json.Marshal(e)
		if err != nil {
			return nil, fmt.Errorf("encode %s zone: %w", provider, err)
		}
		zones = append(zones, b)
	}
	var err error
	if networks["zones"], err = json.Marshal(zones); err != nil {
		return nil, fmt.Errorf("encode %s networks.zones: %w", provider, err)
	}
	if top["networks"], err = json.Marshal(networks); err != nil {
		return nil, fmt.Errorf("encode %s networks: %w", provider, err)
	}
	out, err := json.Marshal(top)
	if err != nil {
		return nil, fmt.Errorf("encode %s infrastructureConfig: %w", provider, err)
	}
	return out, nil
}

// orNull returns raw, or JSON null when raw is absent.
func orNull(raw json.RawMessage) json.RawMessage {
	if raw == nil {
		return json.RawMessage("null")
	}
	return raw
}
