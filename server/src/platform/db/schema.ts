/**
 * Kysely's view of the database: the tables' types live in schema/<area>.ts, and this file
 * puts them together. Each migration that adds or changes a table updates the matching
 * interface there. Times are stored as ISO-8601 UTC text with milliseconds.
 */
import type { SchemaMigrationsTable, MetaTable, SettingsTable, JobsTable, PeriodicClaimsTable } from './schema/core.js';
import type {
  UsersTable,
  SessionsTable,
  AuthThrottleTable,
  RecoveryCodesTable,
  PasskeysTable,
  IntegrationTokensTable,
  PasswordLinksTable,
} from './schema/accounts.js';
import type {
  LocationsTable,
  ScreensTable,
  DeviceCredentialsTable,
  PairingSessionsTable,
  ScreenGroupsTable,
  ScreenGroupMembersTable,
  ScreenCommandsTable,
  ScreenHistoryTable,
  NoiseBucketsTable,
} from './schema/screens.js';
import type {
  PlaylistsTable,
  PlaylistItemsTable,
  LayoutsTable,
  LayoutRevisionsTable,
  SchedulesTable,
  ScheduleTargetsTable,
  PlaylistAssignmentsTable,
  ManifestDepSetsTable,
  ManifestScreenDepsTable,
} from './schema/content.js';
import type {
  MediaFilesTable,
  ContentFoldersTable,
  ContentCollectionsTable,
  ContentTagsTable,
  UploadsTable,
  AssetsTable,
  AssetVariantsTable,
  AssetTagsTable,
  AssetCollectionsTable,
} from './schema/media.js';
import type {
  DataSourcesTable,
  DataSourceSnapshotsTable,
  DataSourceFetchStateTable,
  DataSourceAttemptsTable,
  DataSourceGrantsTable,
  DataSourceRowsTable,
  DataOutputBlobsTable,
  DataOutputKeysTable,
  DataSourceOutputsTable,
  DataSourceImagesTable,
  DataSourceFormsTable,
  DataSourceFormVersionsTable,
  DataSourceRecordEventsTable,
  DataSourceRecordApprovalsTable,
  DataSourceRecordAttachmentsTable,
  IdempotencyKeysTable,
} from './schema/data-sources.js';
import type { CampaignReleasesTable, CampaignsTable, ContentPublicationsTable } from './schema/publications.js';
import type { PresentationNetworkMembersTable, PresentationNetworksTable } from './schema/presentation-networks.js';
import type { ContentSubmissionEventsTable, ContentSubmissionsTable, NotificationsTable } from './schema/publishing.js';
import type { NoiseDaysTable, NoiseRollupTable } from './schema/noise.js';
import type {
  PlayerReleaseArtifactsTable,
  PlayerReleasesTable,
  ReleaseSourceTable,
  UpdateDeploymentScreensTable,
  UpdateDeploymentsTable,
} from './schema/releases.js';
import type { PluginInstallationsTable, PluginInstancesTable, PluginInstanceTargetsTable } from './schema/plugins.js';
import type { TakeoverEventsTable, TakeoversTable, TakeoverTargetsTable } from './schema/takeovers.js';
import type { WeatherAlertActionsTable, WeatherAlertsTable, WeatherMonitorTable, WeatherRulesTable } from './schema/weather-alerts.js';
import type { WidgetBundleBlobsTable, WidgetBundlesTable, WidgetPreviewImagesTable, WidgetsTable } from './schema/widgets.js';
export type * from './schema/core.js';
export type * from './schema/presentation-networks.js';
export type * from './schema/plugins.js';
export type * from './schema/noise.js';
export type * from './schema/releases.js';
export type * from './schema/accounts.js';
export type * from './schema/screens.js';
export type * from './schema/content.js';
export type * from './schema/media.js';
export type * from './schema/data-sources.js';
export type * from './schema/widgets.js';
export type * from './schema/publications.js';
export type * from './schema/publishing.js';
export type * from './schema/weather-alerts.js';

export interface Database {
  periodic_claims: PeriodicClaimsTable;
  schema_migrations: SchemaMigrationsTable;
  meta: MetaTable;
  users: UsersTable;
  sessions: SessionsTable;
  auth_throttle: AuthThrottleTable;
  recovery_codes: RecoveryCodesTable;
  passkeys: PasskeysTable;
  integration_tokens: IntegrationTokensTable;
  password_links: PasswordLinksTable;
  settings: SettingsTable;
  jobs: JobsTable;
  media_files: MediaFilesTable;
  content_folders: ContentFoldersTable;
  content_collections: ContentCollectionsTable;
  content_tags: ContentTagsTable;
  uploads: UploadsTable;
  assets: AssetsTable;
  asset_variants: AssetVariantsTable;
  asset_tags: AssetTagsTable;
  asset_collections: AssetCollectionsTable;
  locations: LocationsTable;
  screens: ScreensTable;
  device_credentials: DeviceCredentialsTable;
  pairing_sessions: PairingSessionsTable;
  screen_groups: ScreenGroupsTable;
  screen_group_members: ScreenGroupMembersTable;
  screen_commands: ScreenCommandsTable;
  screen_history: ScreenHistoryTable;
  noise_buckets: NoiseBucketsTable;
  noise_minutes: NoiseRollupTable;
  noise_hours: NoiseRollupTable;
  noise_days: NoiseDaysTable;
  player_releases: PlayerReleasesTable;
  player_release_artifacts: PlayerReleaseArtifactsTable;
  release_source: ReleaseSourceTable;
  update_deployments: UpdateDeploymentsTable;
  update_deployment_screens: UpdateDeploymentScreensTable;
  playlists: PlaylistsTable;
  playlist_items: PlaylistItemsTable;
  layouts: LayoutsTable;
  layout_revisions: LayoutRevisionsTable;
  schedules: SchedulesTable;
  schedule_targets: ScheduleTargetsTable;
  playlist_assignments: PlaylistAssignmentsTable;
  manifest_dep_sets: ManifestDepSetsTable;
  manifest_screen_deps: ManifestScreenDepsTable;
  data_sources: DataSourcesTable;
  data_source_snapshots: DataSourceSnapshotsTable;
  data_source_fetch_state: DataSourceFetchStateTable;
  data_source_attempts: DataSourceAttemptsTable;
  data_source_grants: DataSourceGrantsTable;
  data_source_rows: DataSourceRowsTable;
  data_output_blobs: DataOutputBlobsTable;
  data_output_keys: DataOutputKeysTable;
  data_source_outputs: DataSourceOutputsTable;
  data_source_images: DataSourceImagesTable;
  data_source_forms: DataSourceFormsTable;
  data_source_form_versions: DataSourceFormVersionsTable;
  data_source_record_events: DataSourceRecordEventsTable;
  data_source_record_approvals: DataSourceRecordApprovalsTable;
  data_source_record_attachments: DataSourceRecordAttachmentsTable;
  idempotency_keys: IdempotencyKeysTable;
  widgets: WidgetsTable;
  content_publications: ContentPublicationsTable;
  campaigns: CampaignsTable;
  campaign_releases: CampaignReleasesTable;
  presentation_networks: PresentationNetworksTable;
  presentation_network_members: PresentationNetworkMembersTable;
  widget_bundles: WidgetBundlesTable;
  widget_bundle_blobs: WidgetBundleBlobsTable;
  widget_preview_images: WidgetPreviewImagesTable;
  content_submissions: ContentSubmissionsTable;
  content_submission_events: ContentSubmissionEventsTable;
  notifications: NotificationsTable;
  takeovers: TakeoversTable;
  takeover_targets: TakeoverTargetsTable;
  takeover_events: TakeoverEventsTable;
  weather_monitor: WeatherMonitorTable;
  weather_alerts: WeatherAlertsTable;
  weather_rules: WeatherRulesTable;
  weather_alert_actions: WeatherAlertActionsTable;
  plugin_installations: PluginInstallationsTable;
  plugin_instances: PluginInstancesTable;
  plugin_instance_targets: PluginInstanceTargetsTable;
}
