import type { Migration } from './migration.js';
import { m0001_meta } from './0001_meta.js';
import { m0002_accounts } from './0002_accounts.js';
import { m0040_media } from './0040_media.js';
import { m0020_screens } from './0020_screens.js';
import { m0060_system_settings } from './0060_system_settings.js';
import { m0100_content } from './0100_content.js';
import { m0210_retention_indexes } from './0210_retention_indexes.js';
import { m0220_schedule_revision } from './0220_schedule_revision.js';
import { m0250_password_links } from './0250_password_links.js';
import { m0260_json_repair } from './0260_json_repair.js';
import { m0300_data_sources } from './0300_data_sources.js';
import { m0310_data_source_outputs } from './0310_data_source_outputs.js';
import { m0320_data_source_images } from './0320_data_source_images.js';
import { m0330_data_source_forms } from './0330_data_source_forms.js';
import { m0340_data_source_records } from './0340_data_source_records.js';
import { m0350_widgets } from './0350_widgets.js';
import { m0360_publications } from './0360_publications.js';
import { m0365_playlist_publications } from './0365_playlist_publications.js';
import { m0370_schedule_widget_drafts } from './0370_schedule_widget_drafts.js';
import { m0380_publishing } from './0380_publishing.js';
import { m0390_campaigns } from './0390_campaigns.js';
import { m0400_takeovers } from './0400_takeovers.js';
import { m0410_presentation_networks } from './0410_presentation_networks.js';
import { m0420_weather_alerts } from './0420_weather_alerts.js';
import { m0430_plugins } from './0430_plugins.js';
import { m0440_noise_rollups } from './0440_noise_rollups.js';
import { m0450_noise_rollups_lean } from './0450_noise_rollups_lean.js';
import { m0460_player_releases } from './0460_player_releases.js';
import { m0470_noise_buckets_no_time_index } from './0470_noise_buckets_no_time_index.js';
import { m0480_noise_integer_keys } from './0480_noise_integer_keys.js';
import { m0490_manifest_dep_sets } from './0490_manifest_dep_sets.js';
import { m0500_cluster } from './0500_cluster.js';

export type { Migration } from './migration.js';

/** Every migration, in order. A new migration is appended here, never inserted. */
export const MIGRATIONS: readonly Migration[] = [
  m0001_meta,
  m0002_accounts,
  m0020_screens,
  m0040_media,
  m0060_system_settings,
  m0100_content,
  m0210_retention_indexes,
  m0220_schedule_revision,
  m0250_password_links,
  m0260_json_repair,
  m0300_data_sources,
  m0310_data_source_outputs,
  m0320_data_source_images,
  m0330_data_source_forms,
  m0340_data_source_records,
  m0350_widgets,
  m0360_publications,
  m0365_playlist_publications,
  m0370_schedule_widget_drafts,
  m0380_publishing,
  m0390_campaigns,
  m0400_takeovers,
  m0410_presentation_networks,
  m0420_weather_alerts,
  m0430_plugins,
  m0440_noise_rollups,
  m0450_noise_rollups_lean,
  m0460_player_releases,
  m0470_noise_buckets_no_time_index,
  m0480_noise_integer_keys,
  m0490_manifest_dep_sets,
  m0500_cluster,
];
