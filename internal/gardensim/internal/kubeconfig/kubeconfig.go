// Package kubeconfig turns a rest.Config into a kubeconfig file, for the simulator's own
// processes (gardener-apiserver, the provider webhooks) and for callers in other processes.
package kubeconfig

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Marshal returns a kubeconfig whose one context, name, reaches cfg's server with cfg's
// credentials (inline data or file paths, as cfg holds them).
func Marshal(cfg *rest.Config, name string) ([]byte, error) {
	kc := clientcmdapi.NewConfig()
	kc.Clusters[name] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData, CertificateAuthority: cfg.CAFile}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{
		ClientCertificateData: cfg.CertData, ClientCertificate: cfg.CertFile,
		ClientKeyData: cfg.KeyData, ClientKey: cfg.KeyFile, Token: cfg.BearerToken,
	}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	kc.CurrentContext = name
	data, err := clientcmd.Write(*kc)
	if err != nil {
		return nil, fmt.Errorf("write %s kubeconfig: %w", name, err)
	}
	return data, nil
}
