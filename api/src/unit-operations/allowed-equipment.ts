/**
 * Which equipment suits which unit-operation type (GET /api/v1/unit-operation-types). Equipment
 * types are free text, so the match is by keyword: an equipment qualifies for a unit-operation type
 * when its type contains one of the type's keywords, case-insensitively (a "Stirred-tank bioreactor"
 * for fermentation, a "Disc-stack centrifuge" for centrifugation, an "AKTA chromatography skid" for
 * chromatography). When no equipment of the organisation matches a type, all of its equipment is
 * allowed, so a lab whose equipment types use other words is never blocked.
 */
import type { UnitOperationType } from '@bioprocess/shared/enums';
import { UNIT_OPERATION_TYPES } from '@bioprocess/shared/enums';

export const EQUIPMENT_KEYWORDS_BY_UNIT_OPERATION: Record<UnitOperationType, readonly string[]> = {
  fermentation: ['bioreactor', 'fermenter', 'fermentor', 'fermentation'],
  centrifugation: ['centrifuge', 'centrifugation', 'separator', 'decanter'],
  filtration: ['filter', 'filtration', 'tff', 'membrane'],
  chromatography: ['chromatography', 'column', 'skid', 'akta', 'äkta', 'hplc', 'fplc'],
  spray_drying: ['spray dryer', 'spray drier', 'spray-dryer', 'spray drying', 'spray'],
  freeze_drying: ['freeze dryer', 'freeze drier', 'freeze-dryer', 'lyophili', 'lyophyli'],
  milling: ['mill', 'grinder'],
  alkali_extraction: ['extraction', 'extractor', 'reactor', 'tank', 'vessel'],
  isoelectric_precipitation: ['precipitation', 'precipitator', 'tank', 'vessel'],
  mixing: ['mixer', 'mixing', 'blender', 'tank', 'vessel'],
  heating: ['heater', 'heat exchanger', 'heating', 'oven', 'jacketed', 'tank', 'vessel'],
  cooling: ['cooler', 'chiller', 'heat exchanger', 'cooling', 'freezer', 'tank', 'vessel'],
};

export interface EquipmentKind {
  id: number;
  type: string;
}

export function equipmentIdsAllowedFor(type: UnitOperationType, equipment: readonly EquipmentKind[]): number[] {
  const keywords = EQUIPMENT_KEYWORDS_BY_UNIT_OPERATION[type];
  const matching = equipment.filter((item) => {
    const equipmentType = item.type.toLowerCase();
    return keywords.some((keyword) => equipmentType.includes(keyword));
  });
  return (matching.length > 0 ? matching : equipment).map((item) => item.id);
}

export function unitOperationTypesWithEquipment(equipment: readonly EquipmentKind[]) {
  return UNIT_OPERATION_TYPES.map((type) => ({ type, equipment_ids: equipmentIdsAllowedFor(type, equipment) }));
}
