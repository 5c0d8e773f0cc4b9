export {
  startApiServer,
  adminUser,
  type ApiHandler,
  type ApiHandlerDeps,
  type ApiHandlerFactory,
  type ApiServerOptions,
  type RunningApiServer,
} from './server.js';
export {
  newRequestAuthenticator,
  newStaticTokenAuthenticator,
  isPublicInfoPath,
  anonymousUser,
  type AuthResult,
  type RequestAuthenticator,
  type RequestAuthenticatorOptions,
  type TokenAuthenticator,
} from './authn.js';
export { ensurePki, servingCertProblem, defaultServingDnsNames, type Pki, type PkiOptions } from './pki.js';
export { renderKubeconfig, writeKubeconfig, kubeconfigNames, type AdminKubeconfig } from './kubeconfig.js';
export { firstServiceIP } from './service-ip.js';
export { withAuthenticated } from './authn.js';
export {
  newServiceAccountTokenAuthenticator,
  newServiceAccountTokenSigner,
  serviceAccountUsername,
  serviceAccountGroups,
  legacyIssuer,
  defaultIssuer,
  type ServiceAccountTokenAuthenticator,
  type ServiceAccountTokenAuthenticatorOptions,
  type ServiceAccountTokenResult,
  type ServiceAccountTokenSigner,
  type BoundTokenRequest,
} from './sa-token.js';
export { setupServiceAccountTokens, storageReader, type ServiceAccountTokenOptions, type ServiceAccountTokens } from './sa-setup.js';
