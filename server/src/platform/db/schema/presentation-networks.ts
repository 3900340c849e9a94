/** Presentation networks (migration 0410, docs/presentation-networks.md). */
export interface PresentationNetworksTable {
  id: string;
  name: string;
  /** ISO time on the server clock: every member's playlist cycle counts from it. */
  epoch: string;
  revision: number;
  created_at: string;
  updated_at: string;
}

export interface PresentationNetworkMembersTable {
  network_id: string;
  screen_id: string;
  /** 0, 1, 2... left to right (the order PUT screens gave). */
  position: number;
  /** 1 for the network's one leader. */
  leader: number;
}
