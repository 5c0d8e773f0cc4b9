/**
 * The kcm command: dispatches to the subcommands.
 */

const USAGE = `kcm: the Kubernetes controller manager in TypeScript, with an embedded control plane.

Usage:
  kcm <command> [flags]

Commands:
  up                   run a whole local control plane (API server, controllers, scheduler, nodes)
  controller-manager   run the controllers against any cluster (kube-controller-manager's flags)
  apiserver            run the embedded Kubernetes API server alone
  scheduler            run the default scheduler
  nodes                run simulated nodes (kubelets without containers)
  proxy                compute (and print) the iptables or IPVS rules kube-proxy would program on a node
  local-path-provisioner  run the local-path volume provisioner and resizer alone
  crd                  CustomResourceDefinitions from TypeScript resource definitions, and TypeScript types from CRDs
  dashboard            serve a live web view of the control loops for any cluster
  version              print the version

Run 'kcm <command> --help' for the flags of a command.
`;

type Command = (args: string[]) => Promise<number>;

const commands: Record<string, () => Promise<Command>> = {};

/** Registers a subcommand, loaded lazily so that start-up pays only for what runs. */
export function registerCommand(name: string, load: () => Promise<Command>): void {
  commands[name] = load;
}

registerCommand('apiserver', () => import('./apiserver.js').then((m) => m.run));
registerCommand('controller-manager', () => import('./controller-manager.js').then((m) => m.run));
registerCommand('up', () => import('./up.js').then((m) => m.run));
registerCommand('nodes', () => import('./nodes.js').then((m) => m.run));
registerCommand('scheduler', () => import('./scheduler.js').then((m) => m.run));
registerCommand('local-path-provisioner', () => import('./local-path-provisioner.js').then((m) => m.run));
registerCommand('crd', () => import('./crd.js').then((m) => m.run));
registerCommand('proxy', () => import('./proxy.js').then((m) => m.run));
registerCommand('dashboard', () => import('./dashboard.js').then((m) => m.run));

export async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  if (cmd === undefined || cmd === '--help' || cmd === '-h' || cmd === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  if (cmd === 'version' || cmd === '--version') {
    process.stdout.write('kcm v0.1.0\n');
    return 0;
  }
  const load = commands[cmd];
  if (!load) {
    process.stderr.write(`kcm: unknown command "${cmd}" (see 'kcm --help')\n`);
    return 1;
  }
  return (await load())(rest);
}
