import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Auth, CurrentPrincipal } from '#src/access/auth/auth.decorator.js';
import type { Principal } from '#src/access/tenants/tenants.service.js';
import { ApiStandardProblems } from '#src/platform/errors/api-problem-responses.js';
import { Idempotent } from '#src/platform/idempotency/idempotent.decorator.js';
import { CardBody, type CardForm } from '../common/card-body.pipe.js';
import {
  ApiCardProblems,
  CardId,
  CardQuery,
  type CardQueryOf,
  facade,
  CardRoute,
} from '../common/card-api.js';
import { CardNotificationsService } from './card-notifications.service.js';

@ApiTags('Card notifications')
@ApiStandardProblems()
@ApiCardProblems()
@Auth('app')
@Controller('v1/card/notifications')
export class CardNotificationsController {
  constructor(private readonly notifications: CardNotificationsService) {}

  @Post()
  @HttpCode(201)
  @Idempotent()
  @CardRoute({
    summary: 'Create a notification (hosted payment link)',
    description:
      'A payment request: the provider hosts a payment page at `paymentLinkUrl` and e-mails it to `payeeEmail` unless `skipNotify: 1`. It starts `Pending`; once the payer pays it becomes `Paid` with its `payment` (the app hears it by reading it or by the notification.status_changed webhook). With an Idempotency-Key it is never created twice.',
    body: [
      'CreateNotificationForm',
      {
        payeeName: 'Eleni Georgiou',
        payeeEmail: 'eleni@example.com',
        payeePhone: '+306900000001',
        amount: 2500,
        description: 'Invoice 42',
      },
    ],
    answer: [201, 'Notification', 'The notification, `Pending`'],
  })
  async createCardNotification(
    @CurrentPrincipal() principal: Principal,
    @Body(CardBody('CreateNotificationForm')) form: CardForm<'CreateNotificationForm'>,
  ) {
    return facade('Notification', await this.notifications.create(principal.tenantId, form));
  }

  @Get()
  @CardRoute({
    summary: 'List notifications',
    description: 'Most recent first; `dateFrom`/`dateTo` are inclusive creation days.',
    query: 'listNotifications',
    answer: [200, 'NotificationList', 'A page of notifications'],
  })
  async listCardNotifications(
    @CurrentPrincipal() principal: Principal,
    @Query(CardQuery('listNotifications')) query: CardQueryOf<'listNotifications'>,
  ) {
    return facade('NotificationList', await this.notifications.list(principal.tenantId, query));
  }

  @Get(':notificationId')
  @CardRoute({
    summary: 'Get a notification',
    description: '`Pending`, `Paid` (with its `payment`), `Expired` or `Canceled`.',
    id: ['notificationId', 'notification'],
    answer: [200, 'Notification', 'The notification'],
    problems: { 404: 'No such notification for this tenant' },
  })
  async getCardNotification(
    @CurrentPrincipal() principal: Principal,
    @Param('notificationId', CardId) notificationId: string,
  ) {
    return facade('Notification', await this.notifications.get(principal.tenantId, notificationId));
  }

  @Delete(':notificationId')
  @CardRoute({
    summary: 'Cancel a notification',
    description:
      'Only while `Pending` (otherwise 400 with `upstream.code` 45001); its page can no longer be paid.',
    id: ['notificationId', 'notification'],
    answer: [200, 'Notification', 'The notification, `Canceled`'],
    problems: { 404: 'No such notification for this tenant' },
  })
  async cancelCardNotification(
    @CurrentPrincipal() principal: Principal,
    @Param('notificationId', CardId) notificationId: string,
  ) {
    return facade(
      'Notification',
      await this.notifications.cancel(principal.tenantId, notificationId),
    );
  }
}
