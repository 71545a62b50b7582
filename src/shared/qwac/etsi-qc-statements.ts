import { AsnArray, AsnProp, AsnPropTypes, AsnType, AsnTypeTypes } from '@peculiar/asn1-schema';

/**
 * The ETSI statements of a qualified certificate's qcStatements extension that
 * @peculiar/asn1-x509-qualified (RFC 3739) does not define: QcType (ETSI EN 319 412-5) and the
 * PSD2 statement (ETSI TS 119 495).
 */

export const id_etsi_qcs_QcCompliance = '0.4.0.1862.1.1';
export const id_etsi_qcs_QcType = '0.4.0.1862.1.6';
export const id_etsi_psd2_qcStatement = '0.4.0.19495.2';

/** QcType ::= SEQUENCE OF OBJECT IDENTIFIER (id-etsi-qct-esign, -eseal, -web) */
@AsnType({ type: AsnTypeTypes.Sequence, itemType: AsnPropTypes.ObjectIdentifier })
export class QcType extends AsnArray<string> {
  constructor(items?: string[]) {
    super(items);
    Object.setPrototypeOf(this, QcType.prototype);
  }
}

/** RoleOfPSP ::= SEQUENCE { roleOfPspOid RoleOfPspOid, roleOfPspName RoleOfPspName } */
export class RoleOfPsp {
  @AsnProp({ type: AsnPropTypes.ObjectIdentifier })
  roleOfPspOid = '';

  @AsnProp({ type: AsnPropTypes.Utf8String })
  roleOfPspName = '';
}

/** RolesOfPSP ::= SEQUENCE OF RoleOfPSP */
@AsnType({ type: AsnTypeTypes.Sequence, itemType: RoleOfPsp })
export class RolesOfPsp extends AsnArray<RoleOfPsp> {
  constructor(items?: RoleOfPsp[]) {
    super(items);
    Object.setPrototypeOf(this, RolesOfPsp.prototype);
  }
}

/** PSD2QcType ::= SEQUENCE { rolesOfPSP RolesOfPSP, nCAName NCAName, nCAId NCAId } */
export class Psd2QcType {
  @AsnProp({ type: RolesOfPsp })
  rolesOfPsp = new RolesOfPsp();

  @AsnProp({ type: AsnPropTypes.Utf8String })
  nCAName = '';

  @AsnProp({ type: AsnPropTypes.Utf8String })
  nCAId = '';
}
