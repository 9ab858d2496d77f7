// Package shoot embeds the CustomResourceDefinitions the Gardener simulator
// installs into every shoot cluster it starts, as Gardener's extensions
// would (for example shoot-oidc-service's OpenIDConnect), so that the
// simulator starts from any working directory.
package shoot
